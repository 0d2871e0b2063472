/**
 * The embedded audit as an `AuditStore`: the SQLite `audit` table of one data dir (its one
 * tenant), written through `SqliteAuditLog`, walked by `verifyAudit` and cut by `pruneAudit`.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { asPromise } from "./as_promise.ts";
import type { AuditRow } from "./audit_row.ts";
import { checkedResult, type VerifyResult, verifyRows } from "./audit_chain.ts";
import type { AuditStore } from "./audit_store.ts";
import type { SqliteAuditLog } from "./sqlite_audit_log.ts";
import { DEFAULT_TENANT } from "./tenant.ts";

interface AuditState {
  head_seq: number;
  head_hash: string;
  anchor_seq: number;
  anchor_hash: string;
}

/** The embedded SQLite audit as an `AuditStore` (its one tenant). */
export function sqliteAuditStore(db: DatabaseSync, log: SqliteAuditLog): AuditStore {
  const state = () =>
    db.prepare("SELECT head_seq, head_hash, anchor_seq, anchor_hash FROM audit_state WHERE id = 1")
      .get() as unknown as AuditState;
  return {
    tenant: DEFAULT_TENANT,
    append: (events) => asPromise(() => events.length === 0 ? [] : log.appendAll(events)),
    // Plain objects, as the other adapters give (SQLite's rows have no prototype).
    rows: (afterSeq = 0, limit = 10_000) =>
      Promise.resolve(log.rows(afterSeq, limit).map((r) => ({ ...r }))),
    recent: (f) =>
      asPromise(() =>
        db.prepare(
          "SELECT * FROM audit WHERE (?1 IS NULL OR seq < ?1) AND (?2 IS NULL OR session = ?2) " +
            "AND (?3 IS NULL OR decision = ?3) ORDER BY seq DESC LIMIT ?4",
        ).all(f.before ?? null, f.session ?? null, f.decision ?? null, f.limit)
          .map((r) => ({ ...r }) as unknown as AuditRow)
      ),
    verify: (check) => {
      const s = state();
      const hashAt = db.prepare("SELECT hash FROM audit WHERE seq = ?");
      return Promise.resolve(checkedResult(
        verifyAudit(db),
        {
          anchor: { seq: s.anchor_seq, prevHash: s.anchor_hash },
          head: { seq: s.head_seq, hash: s.head_hash },
          hashAt: (seq) => (hashAt.get(seq) as { hash: string } | undefined)?.hash,
        },
        DEFAULT_TENANT,
        check,
      ));
    },
    head: () => {
      const s = state();
      return Promise.resolve({ seq: s.head_seq, hash: s.head_hash });
    },
    addCheckpoint: (c) =>
      asPromise(() => {
        db.prepare(
          "INSERT INTO audit_checkpoints (seq, hash, ts, runtime, key_id, sig) VALUES (?,?,?,?,?,?)",
        ).run(c.seq, c.hash, c.ts, c.runtime, c.key_id, c.sig);
      }),
    checkpoints: () =>
      Promise.resolve(
        db.prepare("SELECT * FROM audit_checkpoints ORDER BY ts, seq").all().map((r) => ({
          v: 1 as const,
          tenant: DEFAULT_TENANT,
          seq: Number(r.seq),
          hash: String(r.hash),
          ts: String(r.ts),
          runtime: String(r.runtime),
          key_id: String(r.key_id),
          sig: String(r.sig),
        })),
      ),
    prune: (cutoff) => Promise.resolve(pruneAudit(db, cutoff)),
  };
}

/** Verifies the audit table of `db` from its anchor to its head. */
export function verifyAudit(db: DatabaseSync): VerifyResult {
  const state = db.prepare("SELECT * FROM audit_state WHERE id = 1").get() as unknown as AuditState;
  const rows = db.prepare("SELECT * FROM audit ORDER BY seq").iterate() as Iterable<AuditRow>;
  return verifyRows(
    rows,
    { seq: state.anchor_seq, prevHash: state.anchor_hash },
    { seq: state.head_seq, hash: state.head_hash },
  );
}

/**
 * Removes the rows older than `cutoff` from the start of the chain and records the new
 * anchor, so the remaining rows still verify. Only a prefix is ever removed.
 */
export function pruneAudit(db: DatabaseSync, cutoff: Date): { removed: number; anchorSeq: number } {
  db.exec("BEGIN IMMEDIATE");
  try {
    const state = db.prepare("SELECT * FROM audit_state WHERE id = 1")
      .get() as unknown as AuditState;
    const keep = db.prepare("SELECT seq, prev_hash FROM audit WHERE ts >= ? ORDER BY seq LIMIT 1")
      .get(cutoff.toISOString()) as { seq: number; prev_hash: string } | undefined;
    const anchorSeq = keep?.seq ?? state.head_seq + 1;
    const anchorHash = keep?.prev_hash ?? state.head_hash;
    db.exec("UPDATE audit_state SET pruning = 1 WHERE id = 1");
    const result = db.prepare("DELETE FROM audit WHERE seq < ?").run(anchorSeq);
    db.prepare("UPDATE audit_state SET pruning = 0, anchor_seq = ?, anchor_hash = ? WHERE id = 1")
      .run(anchorSeq, anchorHash);
    db.exec("COMMIT");
    return { removed: Number(result.changes), anchorSeq };
  } catch (err) {
    db.exec("ROLLBACK");
    throw err;
  }
}
