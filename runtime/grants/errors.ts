/**
 * The errors of grants: one class, one stable UPPER_SNAKE `code` per way a grant operation or
 * a redemption can be refused. Messages name grant ids, agents, origins and modes, never a
 * secret value (a grant never holds one).
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";

/**
 * Codes of `GrantError`. Redemption refusals (`GRANT_NOT_FOUND` … `GRANT_WRONG_SESSION`) are
 * also the `reason` of their `grant_redeem` audit row; capture refusals (the same codes plus
 * `GRANT_WRONG_WORKFLOW`, `GRANT_WRONG_OUTPUT`, `CAPTURE_TARGET_*`) of their
 * `grant_capture_check` or `grant_capture` row.
 */
export type GrantErrorCode =
  /** The operator's input does not describe a grant (the message names the field). */
  | "GRANT_INVALID"
  /** `add` names a secret the vault does not hold. */
  | "SECRET_NOT_FOUND"
  /** No grant with that id (or, without ids, no grant of that agent at all). */
  | "GRANT_NOT_FOUND"
  /** `approve` on a grant that is not pending (already approved). */
  | "GRANT_NOT_PENDING"
  /** Redemption of a grant no operator approved yet. */
  | "GRANT_PENDING"
  /** The grant was revoked (by an operator, or because its secret was removed). */
  | "GRANT_REVOKED"
  /** The grant's expiry has passed. */
  | "GRANT_EXPIRED"
  /** A `once` grant that was redeemed already. */
  | "GRANT_USED"
  /** The grant belongs to another agent. */
  | "GRANT_WRONG_AGENT"
  /** The grant has no use of the asked kind (a fill grant never captures, and back). */
  | "GRANT_WRONG_USE"
  /** The document's origin is not one the use allows (exact match after normalizing). */
  | "GRANT_WRONG_ORIGIN"
  /** A capture grant bound to another workflow than the one capturing. */
  | "GRANT_WRONG_WORKFLOW"
  /** A capture grant bound to another output than the one it is named for. */
  | "GRANT_WRONG_OUTPUT"
  /** A capture's target secret id already holds a value (checked, and again at the write). */
  | "CAPTURE_TARGET_OCCUPIED"
  /** Two outputs of one capture would write into the same secret id. */
  | "CAPTURE_TARGET_DUPLICATE"
  /** A `session` grant already bound to another session. */
  | "GRANT_WRONG_SESSION"
  /** The grants table cannot be read or written. */
  | "GRANTS_UNAVAILABLE"
  /** The audit row of an operation could not be written; the operation did not take effect
   * (a redemption's consumption and a revocation stay: both fail closed). */
  | "AUDIT_UNAVAILABLE";

/** A refused grant operation or redemption. */
export class GrantError extends OmotaiError<GrantErrorCode> {}

/**
 * The checks every use of a grant runs first, in this order (a fill's redemption and a capture
 * alike); each path appends its own. A later code means the grant came closer to passing.
 */
export const GRANT_CHECK_ORDER: readonly GrantErrorCode[] = [
  "GRANT_NOT_FOUND",
  "GRANT_WRONG_AGENT",
  "GRANT_REVOKED",
  "GRANT_EXPIRED",
  "GRANT_PENDING",
  "GRANT_USED",
  "GRANT_WRONG_USE",
  "GRANT_WRONG_ORIGIN",
];

/**
 * The text of the refusals that mean the same on every path (`GRANT_USED` and
 * `GRANT_WRONG_USE` say what a fill or a capture expected, so each path words them).
 */
export const GRANT_REFUSAL_TEXT: Partial<Record<GrantErrorCode, string>> = {
  GRANT_NOT_FOUND: "no such grant",
  GRANT_WRONG_AGENT: "the grant belongs to another agent",
  GRANT_REVOKED: "the grant was revoked",
  GRANT_EXPIRED: "the grant has expired",
  GRANT_PENDING: "the grant waits for an operator's approval",
  GRANT_WRONG_ORIGIN: "the grant does not allow this origin",
};
