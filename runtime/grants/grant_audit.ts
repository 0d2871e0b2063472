/**
 * The audit rows grants write: their shape, their sink and the reasons they carry. Split from
 * `grant_store.ts` so the table code and the row shapes each stay one concept; declared here
 * (not in `runtime/audit/`) because grants sit below the audit layer.
 *
 * @module
 */
import { GrantError } from "./errors.ts";
import type { Grant } from "./grant.ts";

/**
 * One audit row of a grant, shaped like `AuditEvent` (`runtime/audit/audit_row.ts`) so an
 * `AuditLog` is a sink as it is; declared here because grants sit below the audit layer.
 *
 * - operator rows: `kind` `grant_add` | `grant_approve` | `grant_revoke`, `source` `operator`,
 *   `module` the door (`cli`, `console`, `api`, `vault` when a removed secret revoked it).
 * - redemption rows: `kind` `grant_redeem`, `source` `action`, `decision` `allow` (reason
 *   `GRANT_REDEEMED`) or `deny` (reason the refusal's code), `origin` the document's origin,
 *   `method` the use kind (`fill`, `capture`).
 *
 * `rule` is the grant id in both, so one grant's history is one filter.
 */
export interface GrantAuditEvent {
  session: string | null;
  agent: string | null;
  kind: "grant_add" | "grant_approve" | "grant_revoke" | "grant_redeem";
  source: "operator" | "action";
  origin: string | null;
  method: string | null;
  decision: "allow" | "deny" | "event";
  reason: string;
  module: string | null;
  rule: string | null;
}

/** Where grant rows go (an `AuditLog`, or a test's memory). Throws when a row cannot be kept. */
export interface GrantAuditSink {
  append(event: GrantAuditEvent): void;
}

/** The reason of an allowed redemption's audit row. */
export const GRANT_REDEEMED = "GRANT_REDEEMED";

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

/** `AUDIT_UNAVAILABLE`: a row could not be written; `what` says what became of the change. */
export function auditUnavailable(err: unknown, what: string): GrantError {
  return new GrantError("AUDIT_UNAVAILABLE", `the audit row could not be written: ${what}`, {
    cause: err,
  });
}
