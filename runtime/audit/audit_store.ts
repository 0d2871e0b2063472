/**
 * The audit as a port: one tenant's hash chain, appended, read, verified and pruned, the
 * same way whichever database holds it. `sqliteAuditStore` is the embedded default (one
 * tenant); `PgAuditLog` (`pg_audit_log.ts`) keeps one chain per tenant in PostgreSQL. One
 * contract suite (`audit_store_contract_test.ts`) runs against both.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { AuditLog } from "./audit_log.ts";
import type { AuditEvent, AuditRow } from "./audit_row.ts";
import { pruneAudit, verifyAudit, type VerifyResult } from "./verify.ts";

/** One tenant's audit chain. */
export interface AuditStore {
  /** The tenant whose chain this is. */
  readonly tenant: string;
  /**
   * Appends `events` in one transaction, each row chained to the one before; throws
   * `AUDIT_UNAVAILABLE` when they cannot be kept (callers then deny).
   */
  append(events: AuditEvent[]): Promise<AuditRow[]>;
  /** Rows in order after `afterSeq`, at most `limit`. */
  rows(afterSeq?: number, limit?: number): Promise<AuditRow[]>;
  /** Walks the chain from its anchor to its recorded head. */
  verify(): Promise<VerifyResult>;
  /**
   * Removes the rows older than `cutoff` from the start of the chain (never younger than the
   * store's retention allows) and moves the anchor so the rest still verify.
   */
  prune(cutoff: Date): Promise<{ removed: number; anchorSeq: number }>;
}

/** The tenant of the embedded default: it has exactly one. */
export const DEFAULT_TENANT = "default";

/** The embedded SQLite audit as an `AuditStore` (its one tenant). */
export function sqliteAuditStore(db: DatabaseSync, log: AuditLog): AuditStore {
  return {
    tenant: DEFAULT_TENANT,
    append: (events) => {
      try {
        return Promise.resolve(events.length === 0 ? [] : log.appendAll(events));
      } catch (err) {
        return Promise.reject(err);
      }
    },
    // Plain objects, as the other adapters give (SQLite's rows have no prototype).
    rows: (afterSeq = 0, limit = 10_000) =>
      Promise.resolve(log.rows(afterSeq, limit).map((r) => ({ ...r }))),
    verify: () => Promise.resolve(verifyAudit(db)),
    prune: (cutoff) => Promise.resolve(pruneAudit(db, cutoff)),
  };
}
