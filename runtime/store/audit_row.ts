/**
 * One audit row: what callers record, what is stored, and how a row is hashed into the
 * chain. Rows name an origin, never a path or query: those can carry secrets. Every writer
 * builds its rows here (`auditFields`, `chainedRow`), with the redactor it was given: the
 * redaction is applied before the hash, whichever database keeps the row.
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

/** A row before it has a place in a chain: what it says, redacted, and when. */
export type AuditFields = Omit<AuditRow, "seq" | "prev_hash" | "hash">;

/**
 * The hash of a row: SHA-256 over the previous hash, a newline and the JSON array of the
 * row's fields in {@link AUDIT_FIELDS} order (`seq` first).
 */
export function rowHash(row: Omit<AuditRow, "hash">): string {
  return chainHash(row.prev_hash, row.seq, rowTail(row));
}

/**
 * What a row's hash covers after its `seq`: the JSON array of its other fields without its
 * opening bracket. With it, whoever assigns the row its place (PostgreSQL's `audit_append`,
 * under the tenant's lock) hashes it as {@link chainHash} does without parsing the row: the
 * array `[seq, ts, …]` is `[` + seq + `,` + the tail.
 */
export function rowTail(fields: AuditFields): string {
  return JSON.stringify(TAIL_FIELDS.map((f) => fields[f])).slice(1);
}

/** The hash of the row with `tail` ({@link rowTail}) at `seq` after `prevHash`. */
export function chainHash(prevHash: string, seq: number, tail: string): string {
  if (!Number.isSafeInteger(seq)) throw new RangeError("an audit row's seq is an integer");
  return createHash("sha256").update(`${prevHash}\n[${seq},${tail}`).digest("hex");
}

const TAIL_FIELDS = AUDIT_FIELDS.slice(1) as Exclude<(typeof AUDIT_FIELDS)[number], "seq">[];

/**
 * What `event` records at `ts`: every free-text field through `redact` and then made
 * storable (`source` and `decision` are the runtime's own closed sets), anything URL-like cut
 * to its origin.
 */
export function auditFields(
  event: AuditEvent,
  ts: string,
  redact: (text: string) => string,
): AuditFields {
  const r = (v: unknown) => v == null ? null : storable(redact(String(v)));
  return {
    ts,
    session: r(event.session),
    agent: r(event.agent),
    kind: storable(redact(String(event.kind))),
    // The runtime's own closed sets, as text all the same: what is stored is what is hashed.
    source: String(event.source),
    origin: r(auditOrigin(event.origin)),
    method: r(event.method),
    decision: String(event.decision),
    reason: r(event.reason),
    module: r(event.module),
    rule: r(event.rule),
  };
}

/**
 * `text` as every store keeps it unchanged: U+0000 and unpaired surrogates become U+FFFD.
 * PostgreSQL's text and jsonb hold neither (the append is refused), and SQLite keeps a NUL's
 * row cut short or a surrogate replaced, so the row would no longer match its hash. Page text
 * reaches some fields (a form's method, a host), so one row must never be able to do either.
 * After redaction: a secret is matched in the text as the page sent it.
 */
function storable(text: string): string {
  return text.toWellFormed().replaceAll("\u0000", "\ufffd");
}

/**
 * The row `event` becomes at `seq`, chained to `prevHash`: its fields ({@link auditFields},
 * redacted before they are hashed) with its place and hash.
 */
export function chainedRow(
  event: AuditEvent,
  at: { seq: number; ts: string; prevHash: string },
  redact: (text: string) => string,
): AuditRow {
  return placedRow(auditFields(event, at.ts, redact), at.seq, at.prevHash);
}

/** `fields` at `seq` after `prevHash`, hashed. */
export function placedRow(fields: AuditFields, seq: number, prevHash: string): AuditRow {
  const base: Omit<AuditRow, "hash"> = { seq, ...fields, prev_hash: prevHash };
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
 * The runtime's audit writer: `SqliteAuditLog` (SQLite) or `PgAuditSink` (PostgreSQL). `append`
 * is for rows nothing waits on (lifecycle events) and throws at once when the store is known
 * to be failing; `appendSoon` is for rows an action or a request waits on ("audit before it
 * runs"): it resolves only once the row is kept, and its rejection is a deny.
 */
export interface AuditWriter extends AuditSink {
  appendSoon(event: AuditEvent): Promise<AuditRow>;
}
