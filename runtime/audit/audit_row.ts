/**
 * One audit row: what callers record, what is stored, and how a row is hashed into the
 * chain. Rows name an origin, never a path or query: those can carry secrets.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** The hash the first row of a fresh log chains from. */
export const GENESIS_HASH = "0".repeat(64);

/** What a caller records. */
export interface AuditEvent {
  session?: string | null;
  agent?: string | null;
  /** Action kind (navigate, click...), `request`, or a lifecycle event name. */
  kind: string;
  /**
   * Which layer decided: an agent action, the request guard, the egress proxy, the operator
   * (an approval, a key added or removed), or none.
   */
  source: "action" | "request" | "proxy" | "operator" | "lifecycle";
  /** Origin only; anything longer is cut to its origin before it is stored. */
  origin?: string | null;
  method?: string | null;
  decision: "allow" | "deny" | "confirm" | "event";
  reason?: string | null;
  module?: string | null;
  rule?: string | null;
}

/** A stored row. */
export interface AuditRow {
  seq: number;
  ts: string;
  session: string | null;
  agent: string | null;
  kind: string;
  source: string;
  origin: string | null;
  method: string | null;
  decision: string;
  reason: string | null;
  module: string | null;
  rule: string | null;
  prev_hash: string;
  hash: string;
}

/** Row fields in hashing and storage order. */
export const AUDIT_FIELDS = [
  "seq",
  "ts",
  "session",
  "agent",
  "kind",
  "source",
  "origin",
  "method",
  "decision",
  "reason",
  "module",
  "rule",
] as const;

/** The hash of a row: SHA-256 over the previous hash and the row's fields in fixed order. */
export function rowHash(row: Omit<AuditRow, "hash">): string {
  const fields = AUDIT_FIELDS.map((f) => row[f]);
  return createHash("sha256").update(`${row.prev_hash}\n${JSON.stringify(fields)}`).digest("hex");
}

/**
 * The row `event` becomes at `seq`, chained to `prevHash`: every free-text field through
 * `redact` before it is hashed (`source` and `decision` are the runtime's own closed sets).
 */
export function chainedRow(
  event: AuditEvent,
  at: { seq: number; ts: string; prevHash: string },
  redact: (text: string) => string,
): AuditRow {
  const r = (v: string | null | undefined) => v == null ? null : redact(v);
  const base: Omit<AuditRow, "hash"> = {
    seq: at.seq,
    ts: at.ts,
    session: r(event.session),
    agent: r(event.agent),
    kind: redact(event.kind),
    source: event.source,
    origin: r(auditOrigin(event.origin)),
    method: r(event.method),
    decision: event.decision,
    reason: r(event.reason),
    module: r(event.module),
    rule: r(event.rule),
    prev_hash: at.prevHash,
  };
  return { ...base, hash: rowHash(base) };
}

/** Cuts anything URL-like to its origin; other strings are kept only when origin-shaped. */
export function auditOrigin(value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    const u = new URL(value);
    if (u.origin !== "null") return u.origin;
    return `${u.protocol}`;
  } catch {
    // host:port as the proxy sees CONNECT targets
    return /^[a-z0-9.\-\[\]:]+$/i.test(value) ? value.toLowerCase() : null;
  }
}

/** Where rows go: the audit log, or a test's memory. Throws when a row cannot be kept. */
export interface AuditSink {
  append(event: AuditEvent): void;
}

/**
 * The runtime's audit writer: `AuditLog` (SQLite) or `PgAuditSink` (PostgreSQL). `append`
 * is for rows nothing waits on (lifecycle events) and throws at once when the store is known
 * to be failing; `appendSoon` is for rows an action or a request waits on ("audit before it
 * runs"): it resolves only once the row is kept, and its rejection is a deny.
 */
export interface AuditWriter extends AuditSink {
  appendSoon(event: AuditEvent): Promise<AuditRow>;
}
