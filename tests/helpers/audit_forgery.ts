/**
 * What someone holding the audit's database can do without the checkpoint key: flip one
 * row's decision and recompute every hash after it, so the chain alone verifies again.
 *
 * @module
 */
import { type AuditRow, rowHash } from "../../runtime/store/audit_row.ts";

/** Rows from `seq` on as the forger rewrites them (row `seq`'s decision flipped). */
export function forgeFrom(rows: AuditRow[], seq: number): AuditRow[] {
  const out: AuditRow[] = [];
  let prev: string | undefined;
  for (const row of rows) {
    if (row.seq < seq) {
      prev = row.hash;
      continue;
    }
    const { hash: _old, ...rest } = row;
    const base = {
      ...rest,
      decision: row.seq === seq ? (row.decision === "allow" ? "deny" : "allow") : row.decision,
      prev_hash: prev ?? row.prev_hash,
    };
    const next = { ...base, hash: rowHash(base) };
    out.push(next);
    prev = next.hash;
  }
  return out;
}
