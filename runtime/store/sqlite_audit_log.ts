/**
 * The embedded audit writer: the append-only, hash-chained `audit` table of SQLite. Every verdict (agent actions and network
 * requests) and every lifecycle event is one row; each row's hash covers its fields and
 * the previous row's hash, so an edited, inserted or removed row breaks the chain that
 * `verifyAudit()` walks. Rows name an origin, never a path or query: those can carry secrets.
 * Every free-text field passes through the redactor (required: see `audit_store.ts`) before it
 * is hashed and stored, so a secret that reached a reason, a rule or an agent name is
 * `[redacted]` in the database, in the JSONL mirror and in the console that reads them, and the
 * chain covers what is stored.
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { OmotaiError } from "../mod.ts";
import {
  AUDIT_FIELDS,
  type AuditEvent,
  type AuditRow,
  type AuditWriter,
  chainedRow,
} from "./audit_row.ts";
import {
  type AuditMirror,
  type AuditRedactor,
  type AuditWriterOptions,
  requiredRedactor,
} from "./audit_store.ts";

/** Appends rows to the audit table (and its mirror). */
export class SqliteAuditLog implements AuditWriter {
  #db: DatabaseSync;
  #mirror: AuditMirror | undefined;
  #head: StatementSync;
  #insert: StatementSync;
  #redactor: AuditRedactor;

  /** `options.redactor` is required: the process's one in the runtime (tests pass their own). */
  constructor(db: DatabaseSync, options: AuditWriterOptions) {
    this.#db = db;
    this.#mirror = options.mirror;
    this.#redactor = requiredRedactor(options);
    this.#head = db.prepare("SELECT head_seq, head_hash FROM audit_state WHERE id = 1");
    this.#insert = db.prepare(
      `INSERT INTO audit (seq, ts, session, agent, kind, source, origin, method, decision,
        reason, module, rule, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    );
  }

  /** Appends one row; throws `AUDIT_UNAVAILABLE` when it cannot (callers then deny). */
  append(event: AuditEvent): AuditRow {
    return this.#write([event])[0];
  }

  /** Appends rows in one transaction, in order; throws `AUDIT_UNAVAILABLE` as `append`. */
  appendAll(events: AuditEvent[]): AuditRow[] {
    return this.#write(events);
  }

  /**
   * Appends a row together with the others queued in the same turn of the event loop: one
   * transaction for a burst (a page load's requests) instead of one each. Resolves once the
   * row is committed; rejects with `AUDIT_UNAVAILABLE` (for every row of the batch) when it
   * cannot be, and callers then deny.
   */
  appendSoon(event: AuditEvent): Promise<AuditRow> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ event, resolve, reject });
      if (this.#queue.length === 1) queueMicrotask(() => this.#flush());
    });
  }

  #queue: {
    event: AuditEvent;
    resolve: (row: AuditRow) => void;
    reject: (err: unknown) => void;
  }[] = [];

  #flush(): void {
    const batch = this.#queue;
    this.#queue = [];
    try {
      const rows = this.#write(batch.map((b) => b.event));
      batch.forEach((b, i) => b.resolve(rows[i]));
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }

  /** Writes rows in one transaction, each chained to the one before. */
  #write(events: AuditEvent[]): AuditRow[] {
    try {
      this.#db.exec("BEGIN IMMEDIATE");
      const rows: AuditRow[] = [];
      try {
        const head = this.#head.get() as { head_seq: number; head_hash: string };
        let seq = head.head_seq;
        let prev = head.head_hash;
        const ts = new Date().toISOString();
        const redact = (v: string) => this.#redactor.redact(v);
        for (const event of events) {
          const row = chainedRow(event, { seq: ++seq, ts, prevHash: prev }, redact);
          this.#insert.run(...AUDIT_FIELDS.map((f) => row[f]), row.prev_hash, row.hash);
          rows.push(row);
          prev = row.hash;
        }
        this.#db.exec("COMMIT");
      } catch (err) {
        this.#db.exec("ROLLBACK");
        throw err;
      }
      for (const row of rows) this.#mirror?.write(row);
      return rows;
    } catch (err) {
      throw new OmotaiError(
        "AUDIT_UNAVAILABLE",
        this.#redactor.redact(`audit row not written: ${(err as Error).message}`),
      );
    }
  }

  /** Rows in order, optionally after `afterSeq` (for tests and the console). */
  rows(afterSeq = 0, limit = 10_000): AuditRow[] {
    return this.#db.prepare("SELECT * FROM audit WHERE seq > ? ORDER BY seq LIMIT ?")
      .all(afterSeq, limit) as unknown as AuditRow[];
  }
}
