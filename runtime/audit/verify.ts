/**
 * Checking the audit's copies outside the database: the JSONL mirror's files walked as one
 * chain (`verifyRows` of runtime/store/, the one walk every store's `verify()` makes too), and
 * the age `omotai audit prune --older-than` takes.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";
import { type AuditRow, type VerifyResult, verifyRows } from "../store/mod.ts";

/** Verifies JSONL mirror files (oldest first) as one chain. */
export function verifyJsonl(files: string[]): VerifyResult {
  const rows: AuditRow[] = [];
  for (const file of files) {
    const text = Deno.readTextFileSync(file);
    let n = 0;
    for (const line of text.split("\n")) {
      n++;
      if (!line.trim()) continue;
      try {
        rows.push(JSON.parse(line) as AuditRow);
      } catch {
        return {
          ok: false,
          rows: rows.length,
          firstSeq: rows[0]?.seq ?? null,
          lastSeq: rows.at(-1)?.seq ?? null,
          problems: [`${file}:${n}: not a JSON row`],
        };
      }
    }
  }
  return verifyRows(rows);
}

/** Parses `90d`, `12h`, `30m`, `45s` into milliseconds. */
export function parseAge(text: string): number {
  const m = /^(\d+)([dhms])$/.exec(text.trim());
  if (!m) {
    throw new OmotaiError("BAD_OPTION", `--older-than takes e.g. 90d, 12h, 30m, not "${text}"`);
  }
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 }[m[2] as "d" | "h" | "m" | "s"];
  return Number(m[1]) * unit;
}
