/**
 * `omotai audit verify|prune`: check the hash chain of the audit table (or of its JSONL
 * mirror), held against the runtime's signed checkpoints when given, and remove old rows
 * while keeping what remains verifiable. `--database URL` (or `OMOTAI_DATABASE_URL`) checks
 * one tenant's chain in PostgreSQL instead of the data dir's SQLite.
 *
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { AuditLog } from "../audit/audit_log.ts";
import { type AuditStore, sqliteAuditStore } from "../audit/audit_store.ts";
import { importCheckpointPublicKey } from "../audit/checkpoint.ts";
import { CHECKPOINT_PUB_FILE, readCheckpoints } from "../audit/checkpointer.ts";
import { JsonlMirror } from "../audit/jsonl_mirror.ts";
import { PgAuditLog } from "../audit/pg_audit_log.ts";
import { parseAge, verifyJsonl, type VerifyResult } from "../audit/verify.ts";
import { OmotaiError } from "../errors.ts";
import { AUDIT_OPTIONS } from "../launcher/options.ts";
import { type StoreOptions, withStore } from "./store_choice.ts";

/** Usage of `omotai audit`. */
export const AUDIT_USAGE =
  `omotai audit verify [--jsonl FILE.jsonl] [--checkpoints FILE [--checkpoint-key PUB.pem]]
                    [--data-dir DIR | --database URL --tenant ID]
omotai audit prune --older-than 90d [--data-dir DIR | --database URL --tenant ID]`;

/** Runs an audit subcommand; returns the exit code (1 when the chain is broken). */
export async function auditCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parseArgs({ args: rest, options: AUDIT_OPTIONS });
  switch (sub) {
    case "verify": {
      let result: VerifyResult;
      if (values.jsonl) result = verifyJsonl(JsonlMirror.files(values.jsonl));
      else {
        result = await withAudit(values, async (store, dataDir) => {
          if (!values.checkpoints) return await store.verify();
          const read = await readCheckpoints(values.checkpoints);
          const pubPath = values["checkpoint-key"] ??
            (dataDir ? join(dataDir, CHECKPOINT_PUB_FILE) : undefined);
          if (!pubPath) {
            throw new OmotaiError(
              "BAD_OPTION",
              "--checkpoints with --database needs --checkpoint-key",
            );
          }
          const publicKey = importCheckpointPublicKey(await Deno.readTextFile(pubPath));
          const v = await store.verify({ checkpoints: read.checkpoints, publicKey });
          const problems = [...read.problems, ...v.problems];
          const signed = read.checkpoints.filter((c) => c.tenant === store.tenant).length;
          console.log(`${signed} signed checkpoints of tenant ${store.tenant} checked`);
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

/** The chain the options name: a tenant's in PostgreSQL, or the data dir's SQLite one. */
function withAudit<T>(
  values: StoreOptions,
  fn: (store: AuditStore, dataDir?: string) => Promise<T>,
): Promise<T> {
  return withStore(values, {
    pg: (db, tenant) => new PgAuditLog(db, tenant),
    sqlite: (db) => sqliteAuditStore(db, new AuditLog(db)),
  }, fn);
}
