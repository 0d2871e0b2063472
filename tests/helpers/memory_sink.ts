/**
 * An audit sink that keeps rows in memory, for the unit tests of whatever writes audit rows
 * (approvals, questions, grants, the console), embedded or shared. One copy, so a test that breaks the log
 * breaks it the same way everywhere.
 *
 * @module
 */
import type { AuditEvent } from "../../runtime/store/audit_row.ts";

/**
 * Keeps appended rows in `rows`; `failing` makes every append throw like an unwritable log
 * (`AUDIT_UNAVAILABLE`, as `SqliteAuditLog` does). `E` is the row type the sink takes: an
 * `AuditSink` by default, a `GrantAuditSink` with `MemorySink<GrantAuditEvent>`.
 */
export class MemorySink<E = AuditEvent> {
  /** Every row appended, in order. */
  rows: E[] = [];
  /** When true, `append` throws and keeps nothing. */
  failing = false;

  /** Keeps `event`, or throws while `failing`. */
  append(event: E): void {
    if (this.failing) throw Object.assign(new Error("disk full"), { code: "AUDIT_UNAVAILABLE" });
    this.rows.push(event);
  }

  /** `append` as a writer that is awaited (`AuditWriter.appendSoon`): rejects while `failing`. */
  appendSoon(event: E): Promise<E> {
    try {
      this.append(event);
      return Promise.resolve(event);
    } catch (err) {
      return Promise.reject(err);
    }
  }
}
