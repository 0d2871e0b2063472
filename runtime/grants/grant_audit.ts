/**
 * The audit rows grants write: their shape, their sink and the reasons they carry. Split from
 * `grants.ts` so the flow and the row shapes each stay one concept.
 *
 * @module
 */
import { GrantError } from "./errors.ts";
import type { Grant } from "./grant.ts";

/**
 * One audit row of a grant: `AuditEvent` (`runtime/store/audit_row.ts`) narrowed to the rows
 * grants write, so an `SqliteAuditLog` or a `PgAuditSink` is a sink as it is.
 *
 * - operator rows: `kind` `grant_add` | `grant_approve` | `grant_revoke`, `source` `operator`,
 *   `module` the door (`cli`, `console`, `api`, `vault` when a removed secret revoked it).
 * - redemption rows: `kind` `grant_redeem`, `source` `action`, `decision` `allow` (reason
 *   `GRANT_REDEEMED`) or `deny` (reason the refusal's code), `origin` the document's origin,
 *   `method` the use kind (`fill`, `capture`).
 *
 * - capture rows: `kind` `grant_capture_check` (the no-write check before anything is minted:
 *   `allow` reason `CAPTURE_CHECKED`, or `deny` with the refusal's code, one row per output) or
 *   `grant_capture` (the grant consumed after its value was written: `allow` reason
 *   `GRANT_CAPTURED`, or `deny`), `source` `action`, `origin` the values' origin, `method`
 *   `capture:<workflow>/<output>` (names only, never a value), `module` null.
 *
 * `rule` is the grant id in all, so one grant's history is one filter.
 */
export interface GrantAuditEvent {
  session: string | null;
  agent: string | null;
  kind:
    | "grant_add"
    | "grant_approve"
    | "grant_revoke"
    | "grant_redeem"
    | "grant_capture_check"
    | "grant_capture";
  source: "operator" | "action";
  origin: string | null;
  method: string | null;
  decision: "allow" | "deny" | "event";
  reason: string;
  module: string | null;
  rule: string | null;
}

/**
 * Where grant rows go (an `SqliteAuditLog`, a `PgAuditSink`, or a test's memory). Throws when a
 * row cannot be kept.
 */
export interface GrantAuditSink {
  append(event: GrantAuditEvent): void;
}

/** The reason of an allowed redemption's audit row. */
export const GRANT_REDEEMED = "GRANT_REDEEMED";

/** The reason of a passed capture check's row (one per output). */
export const CAPTURE_CHECKED = "CAPTURE_CHECKED";

/** The reason of a consumed capture grant's row (its value was written). */
export const GRANT_CAPTURED = "GRANT_CAPTURED";

/** Why a grant was revoked because its secret left the vault. */
export const SECRET_REMOVED = "SECRET_REMOVED";

/** The row of an operator change (`module` is the door, `by`). */
export function operatorRow(
  kind: "grant_add" | "grant_approve" | "grant_revoke",
  grant: Grant,
  by: string,
  decision: "allow" | "event",
  reason: string,
): GrantAuditEvent {
  return {
    session: null,
    agent: grant.agent,
    kind,
    source: "operator",
    origin: null,
    method: null,
    decision,
    reason,
    module: by,
    rule: grant.id,
  };
}

/** The row of a capture check or consumption for one output (names and origin, no value). */
export function captureRow(
  kind: "grant_capture_check" | "grant_capture",
  request: { agent: string | null; origin: string | undefined; workflow: string },
  sessionId: string | null,
  output: string,
  grantId: string | null,
  decision: "allow" | "deny",
  reason: string,
): GrantAuditEvent {
  return {
    session: sessionId,
    agent: request.agent,
    kind,
    source: "action",
    origin: request.origin ?? null,
    method: `capture:${request.workflow}/${output}`,
    decision,
    reason,
    module: null,
    rule: grantId,
  };
}

/** `AUDIT_UNAVAILABLE`: a row could not be written; `what` says what became of the change. */
export function auditUnavailable(err: unknown, what: string): GrantError {
  return new GrantError("AUDIT_UNAVAILABLE", `the audit row could not be written: ${what}`, {
    cause: err,
  });
}
