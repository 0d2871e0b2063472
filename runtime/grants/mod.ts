/**
 * Grants: which agent may use which vault secret, for what, how often, until when and on which
 * exact origins; the operator's add, approve and revoke, and the runtime's redemption
 * ([docs/grants.md](../../docs/grants.md)).
 *
 * @module
 */
export * from "./errors.ts";
export * from "./grant.ts";
export * from "./grants.ts";
export type { GrantListFilter } from "../store/mod.ts";
export {
  CAPTURE_CHECKED,
  GRANT_CAPTURED,
  GRANT_REDEEMED,
  type GrantAuditEvent,
  type GrantAuditSink,
  SECRET_REMOVED,
} from "./grant_audit.ts";
export type { RedeemRequest } from "./redeem_checks.ts";
export {
  CAPTURE_CHECK_ORDER,
  type CaptureCheckRequest,
  type CaptureConsumeRequest,
  type CaptureOutput,
  type CaptureTarget,
} from "./capture_checks.ts";

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { grantIdShaped } from "./capture_checks.ts";
