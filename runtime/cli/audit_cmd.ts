/**
 * `omotai audit verify|prune`: check the hash chain of the audit table (or of its JSONL
 * mirror), held against the runtime's signed checkpoints when given, and remove old rows
 * while keeping what remains verifiable. `--database URL` (or `OMOTAI_DATABASE_URL`) checks
 * one tenant's chain in PostgreSQL instead of the data dir's SQLite; its runtimes each sign
 * with their own key, so `--checkpoints` takes one file per runtime and `--checkpoint-key`
 * their keys in the same order.
 *
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  type AuditStore,
  type ChainCheck,
  PgAuditLog,
  SqliteAuditLog,
  sqliteAuditStore,
  type VerifyResult,
} from "../store/mod.ts";
import {
  CHECKPOINT_PUB_FILE,
  checkpointCheck,
  importCheckpointPublicKey,
  JsonlMirror,
  parseAge,
  readCheckpoints,
  verifyJsonl,
} from "../audit/mod.ts";
import { OmotaiError } from "../mod.ts";
import { AUDIT_LIST_OPTIONS, AUDIT_OPTIONS, spreadLists } from "../launcher/mod.ts";
import { type StoreOptions, withStore } from "./store_choice.ts";
import { processRedactor } from "../redact/mod.ts";

/** Usage of `omotai audit`. */
export const AUDIT_USAGE =
  `omotai audit verify [--jsonl FILE.jsonl] [--checkpoints FILE... [--checkpoint-key PUB.pem...]]
                    [--data-dir DIR | --database URL --tenant ID]
omotai audit prune --older-than 90d [--data-dir DIR | --database URL --tenant ID]`;

/** Runs an audit subcommand; returns the exit code (1 when the chain is broken). */
export async function auditCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parseArgs({
    args: spreadLists(rest, AUDIT_LIST_OPTIONS),
    options: AUDIT_OPTIONS,
  });
  switch (sub) {
    case "verify": {
      let result: VerifyResult;
      if (values.jsonl) result = verifyJsonl(JsonlMirror.files(values.jsonl));
      else {
        result = await withAudit(values, async (store, dataDir) => {
          const files = values.checkpoints ?? [];
          if (files.length === 0) return await store.verify();
          const keys = checkpointKeys(files, values["checkpoint-key"] ?? [], dataDir);
          const problems: string[] = [];
          const checks: ChainCheck[] = [];
          for (const [i, file] of files.entries()) {
            const read = await readCheckpoints(file);
            const publicKey = importCheckpointPublicKey(await Deno.readTextFile(keys[i]));
            problems.push(...read.problems);
            checks.push(checkpointCheck({
              checkpoints: read.checkpoints,
              publicKey,
              source: files.length > 1 ? file : undefined,
            }));
            const signed = read.checkpoints.filter((c) => c.tenant === store.tenant).length;
            const from = files.length > 1 ? ` (${file})` : "";
            console.log(`${signed} signed checkpoints of tenant ${store.tenant} checked${from}`);
          }
          const v = await store.verify(checks);
          problems.push(...v.problems);
          return { ...v, ok: problems.length === 0, problems };
        });
      }
      const span = result.rows ? `rows ${result.firstSeq}..${result.lastSeq}` : "no rows";
      if (result.ok) {
        console.log(`audit ok: ${result.rows} rows (${span}), chain intact`);
        return 0;
      }
      console.log(`audit BROKEN: ${result.rows} rows (${span})`);
      for (const p of result.problems.slice(0, 20)) console.log(`  ${p}`);
      if (result.problems.length > 20) console.log(`  ... ${result.problems.length - 20} more`);
      return 1;
    }
    case "prune": {
      if (!values["older-than"]) {
        console.error(AUDIT_USAGE);
        return 2;
      }
      const cutoff = new Date(Date.now() - parseAge(values["older-than"]));
      const { removed, anchorSeq } = await withAudit(values, (store) => store.prune(cutoff));
      console.log(
        `pruned ${removed} rows older than ${cutoff.toISOString()}; the chain now starts at row ${anchorSeq}`,
      );
      return 0;
    }
    default:
      console.error(AUDIT_USAGE);
      return 2;
  }
}

/**
 * The public key of each checkpoints file, in order: `--checkpoint-key` once per file (each
 * runtime signs with its own key), or, for one file of the data dir's own chain, its key there.
 */
function checkpointKeys(files: string[], keys: string[], dataDir?: string): string[] {
  if (keys.length === 0 && files.length === 1 && dataDir) {
    return [join(dataDir, CHECKPOINT_PUB_FILE)];
  }
  if (keys.length !== files.length) {
    throw new OmotaiError(
      "BAD_OPTION",
      `give one --checkpoint-key per --checkpoints file, in the same order (${files.length} files, ${keys.length} keys)`,
    );
  }
  return keys;
}

/** The chain the options name: a tenant's in PostgreSQL, or the data dir's SQLite one. */
function withAudit<T>(
  values: StoreOptions,
  fn: (store: AuditStore, dataDir?: string) => Promise<T>,
): Promise<T> {
  return withStore(values, {
    pg: (db, tenant) => new PgAuditLog(db, tenant, { redactor: processRedactor() }),
    sqlite: (db) => sqliteAuditStore(db, new SqliteAuditLog(db, { redactor: processRedactor() })),
  }, fn);
}
