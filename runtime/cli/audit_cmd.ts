/**
 * `omotai audit verify|prune`: check the hash chain of the audit table (or of its JSONL
 * mirror), and remove old rows while keeping what remains verifiable.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { JsonlMirror } from "../audit/jsonl_mirror.ts";
import { parseAge, pruneAudit, verifyAudit, verifyJsonl } from "../audit/verify.ts";
import { databasePath, openDatabase } from "../store/database.ts";
import { dataDirFrom } from "../launcher/data_dir.ts";
import { AUDIT_OPTIONS } from "../launcher/options.ts";

/** Usage of `omotai audit`. */
export const AUDIT_USAGE = `omotai audit verify [--jsonl FILE.jsonl] [--data-dir DIR]
omotai audit prune --older-than 90d [--data-dir DIR]`;

/** Runs an audit subcommand; returns the exit code (1 when the chain is broken). */
export function auditCommand(args: string[]): number {
  const [sub, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: AUDIT_OPTIONS,
  });
  switch (sub) {
    case "verify": {
      const result = values.jsonl
        ? verifyJsonl(JsonlMirror.files(values.jsonl))
        : withDb(dataDirFrom(values["data-dir"]), verifyAudit);
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
      const { removed, anchorSeq } = withDb(
        dataDirFrom(values["data-dir"]),
        (db) => pruneAudit(db, cutoff),
      );
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

function withDb<T>(dataDir: string, fn: (db: ReturnType<typeof openDatabase>) => T): T {
  Deno.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(databasePath(dataDir));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
