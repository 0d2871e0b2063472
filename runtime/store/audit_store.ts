/**
 * The audit as a port: one tenant's hash chain, appended, read, verified and pruned, the
 * same way whichever database holds it. `sqliteAuditStore` (`sqlite_audit_store.ts`, over
 * `SqliteAuditLog`) is the embedded default (one tenant); `PgAuditLog` (`pg_audit_log.ts`)
 * keeps one chain per tenant in PostgreSQL. One contract suite
 * (`audit_store_contract_test.ts`) runs against both.
 *
 * The rule kept here: no row is hashed or stored before every free-text field went through
 * the redactor. Each writer takes its redactor as a required dependency (`AuditRedactor`,
 * the process's one in the runtime: runtime/redact/ sits above this folder) and applies it
 * itself, in `auditFields()`; no writer has a default, so none can be built without one.
 *
 * @module
 */
import type { AuditEvent, AuditRow } from "./audit_row.ts";
import type { ChainCheck, VerifyResult } from "./audit_chain.ts";

/** What blanks secrets in a row's text (runtime/redact/'s `Redactor`). */
export interface AuditRedactor {
  redact(text: string): string;
}

/** A copy of every row kept, outside the database (runtime/audit/'s `JsonlMirror`). */
export interface AuditMirror {
  write(row: AuditRow): void;
}

/** What an audit writer writes with. */
export interface AuditWriterOptions {
  /** Applied to every free-text field before a row is hashed and stored. Required. */
  redactor: AuditRedactor;
  /** Where rows are copied once kept. */
  mirror?: AuditMirror;
}

/**
 * `options.redactor`, or a `TypeError` when there is none: a writer built past the types
 * (an untyped caller) fails at construction, before it could store a row unredacted.
 */
export function requiredRedactor(options: AuditWriterOptions | undefined): AuditRedactor {
  const redactor = options?.redactor;
  if (typeof redactor?.redact !== "function") {
    throw new TypeError("an audit writer needs its redactor (options.redactor)");
  }
  return redactor;
}

/** One signed head, as a store keeps it beside the rows (signed by runtime/audit/). */
export interface Checkpoint {
  v: 1;
  tenant: string;
  seq: number;
  hash: string;
  ts: string;
  /** The runtime that signed it. */
  runtime: string;
  /** The first 16 hex of the SHA-256 of the public key (SPKI DER). */
  key_id: string;
  /** Ed25519 over the other members, base64. */
  sig: string;
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
   * Appends `events` in one transaction, each row redacted and chained to the one before;
   * throws `AUDIT_UNAVAILABLE` when they cannot be kept (callers then deny), or
   * `AUDIT_ROW_REFUSED` when the store answered and refused them for what they hold (it works
   * for other rows).
   */
  append(events: AuditEvent[]): Promise<AuditRow[]>;
  /** Rows in order after `afterSeq`, at most `limit`. */
  rows(afterSeq?: number, limit?: number): Promise<AuditRow[]>;
  /** Rows newest first that match `filter`, at most `filter.limit` (the console's pages). */
  recent(filter: RecentFilter): Promise<AuditRow[]>;
  /**
   * Walks the chain from its anchor to its recorded head, and holds it against `check` when
   * given (signed checkpoints: a history rewritten by the database's owner fails there).
   */
  verify(check?: ChainCheck | readonly ChainCheck[]): Promise<VerifyResult>;
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
