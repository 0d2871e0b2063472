/**
 * The audit as a port: one tenant's hash chain, appended, read, verified and pruned, the
 * same way whichever database holds it. `sqliteAuditStore` is the embedded default (one
 * tenant); `PgAuditLog` (`pg_audit_log.ts`) keeps one chain per tenant in PostgreSQL. One
 * contract suite (`audit_store_contract_test.ts`) runs against both.
 *
 * @module
 */
import type { KeyObject } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import type { AuditLog } from "./audit_log.ts";
import type { AuditEvent, AuditRow } from "./audit_row.ts";
import { type ChainView, checkAgainst, type Checkpoint } from "./checkpoint.ts";
import { pruneAudit, verifyAudit, type VerifyResult } from "./verify.ts";
import { asPromise, DEFAULT_TENANT } from "../store/mod.ts";

/** Signed checkpoints to hold a chain against, and the key that signed them. */
export interface CheckpointCheck {
  checkpoints: Iterable<Checkpoint>;
  publicKey: KeyObject;
  /** Where they came from (a file), named in each problem they find. */
  source?: string;
}

/** Which rows the console pages through: newest first, `before` the last row of a page. */
export interface RecentFilter {
  /** Rows at most. */
  limit: number;
  /** Only rows with a `seq` below this (the next page after a row). */
  before?: number;
  /** Only this session's rows (as stored, after redaction). */
  session?: string;
  /** Only rows with this decision (`allow`, `deny`, `confirm`, `event`). */
  decision?: string;
}

/** One tenant's audit chain. */
export interface AuditStore {
  /** The tenant whose chain this is. */
  readonly tenant: string;
  /**
   * Appends `events` in one transaction, each row chained to the one before; throws
   * `AUDIT_UNAVAILABLE` when they cannot be kept (callers then deny), or `AUDIT_ROW_REFUSED`
   * when the store answered and refused them for what they hold (it works for other rows).
   */
  append(events: AuditEvent[]): Promise<AuditRow[]>;
  /** Rows in order after `afterSeq`, at most `limit`. */
  rows(afterSeq?: number, limit?: number): Promise<AuditRow[]>;
  /** Rows newest first that match `filter`, at most `filter.limit` (the console's pages). */
  recent(filter: RecentFilter): Promise<AuditRow[]>;
  /**
   * Walks the chain from its anchor to its recorded head, and holds it against signed
   * checkpoints when given (a history rewritten by the database's owner fails there).
   */
  verify(check?: CheckpointCheck | readonly CheckpointCheck[]): Promise<VerifyResult>;
  /** The chain's last row (`seq` 0 and the genesis when empty): what a checkpoint signs. */
  head(): Promise<{ seq: number; hash: string }>;
  /** Keeps a signed checkpoint beside the rows. */
  addCheckpoint(checkpoint: Checkpoint): Promise<void>;
  /** The checkpoints kept beside the rows, oldest first. */
  checkpoints(): Promise<Checkpoint[]>;
  /**
   * Removes the rows older than `cutoff` from the start of the chain (never younger than the
   * store's retention allows) and moves the anchor so the rest still verify.
   */
  prune(cutoff: Date): Promise<{ removed: number; anchorSeq: number }>;
}

/**
 * Adds what `check` finds against `chain` to `result`. Several checks are one per signer
 * (each runtime of a tenant signs with its own key): the chain must agree with every one.
 */
export function checkedResult(
  result: VerifyResult,
  chain: ChainView,
  tenant: string,
  check?: CheckpointCheck | readonly CheckpointCheck[],
): VerifyResult {
  const checks: readonly CheckpointCheck[] = check === undefined
    ? []
    : Array.isArray(check)
    ? check
    : [check as CheckpointCheck];
  const problems = checks.flatMap((c) =>
    checkAgainst(chain, tenant, c.checkpoints, c.publicKey).problems
      .map((p) => c.source === undefined ? p : `${c.source}: ${p}`)
  );
  if (problems.length === 0) return result;
  return { ...result, ok: false, problems: [...result.problems, ...problems] };
}

/** The embedded SQLite audit as an `AuditStore` (its one tenant). */
export function sqliteAuditStore(db: DatabaseSync, log: AuditLog): AuditStore {
  const state = () =>
    db.prepare("SELECT head_seq, head_hash, anchor_seq, anchor_hash FROM audit_state WHERE id = 1")
      .get() as { head_seq: number; head_hash: string; anchor_seq: number; anchor_hash: string };
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
