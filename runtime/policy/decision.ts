/**
 * The one decision type: what the policy engine combines, what the boundary returns for a
 * request and what the gate returns for an action.
 *
 * @module
 */

/** What may happen: `confirm` waits for a human and is never an allow by itself. */
export type DecisionKind = "allow" | "deny" | "confirm";

/**
 * The deny codes the runtime decides with itself (gate, boundary, write holds, approvals,
 * engine, egress). `Decision.reason` stays a `string`: a policy module returns its own
 * UPPER_SNAKE codes (`ORIGIN_NOT_ALLOWED`, `READ_ONLY_WRITE`, ... of the bundled policies),
 * and allows carry `OK`, `WRITE_HELD`, `APPROVED`, `HELD_AT_PROXY`, `LOGIN_SUBMIT`, `CAPTURE_SUBMIT`.
 */
export type RuntimeDenyReason =
  /** An audit row could not be written: nothing runs unaudited. */
  | "AUDIT_UNAVAILABLE"
  /** The operator refused a held write. */
  | "CONFIRM_DENIED"
  /** The session's confirmations are used up. */
  | "CONFIRM_LIMIT"
  /** No approver could be asked (none configured, or it failed). */
  | "CONFIRM_UNAVAILABLE"
  /** The operator did not answer in time. */
  | "CONFIRM_TIMEOUT"
  /** The held write's call ended before an answer. */
  | "CONFIRM_WITHDRAWN"
  /** The operator's domain rules deny the origin. */
  | "DOMAIN_DENIED"
  /** The domain rules could not be read. */
  | "DOMAINS_UNREADABLE"
  /** The gate or a judge threw: fail closed. */
  | "GATE_ERROR"
  /** A capture's hold saw a write other than the step's own request. */
  | "CAPTURE_WRITE_MISMATCH"
  /** A capture's request to an origin its workflow's template does not name. */
  | "CAPTURE_ORIGIN_NOT_NAMED"
  /** A login's hold saw a write other than its own submission, or a socket opened under a strict hold. */
  | "LOGIN_WRITE_MISMATCH"
  /** A login's submission to an origin its grant does not name. */
  | "LOGIN_ORIGIN_NOT_NAMED"
  /** No policy module allowed. */
  | "NO_POLICY_ALLOWED"
  /** A policy module failed or answered malformed output. */
  | "POLICY_ERROR"
  /** A request to a private or loopback address. */
  | "PRIVATE_ADDRESS"
  /** A request to the runtime's own console or MCP origin. */
  | "RUNTIME_ORIGIN"
  /** A write of an action that is not its form's submission, script writes being off. */
  | "SCRIPT_WRITE_REFUSED"
  /** A request carrying a guarded credential outside its login. */
  | "SECRET_IN_REQUEST"
  /** A WebSocket handshake under `read_only` to an origin `websockets:` does not list. */
  | "WEBSOCKET_REFUSED"
  /** A write to hold that came without its held request. */
  | "WRITE_UNREADABLE";

/** A decision and what produced it. */
export interface Decision {
  decision: DecisionKind;
  /**
   * Stable UPPER_SNAKE code; `OK` for a plain allow. A {@link RuntimeDenyReason} or a code a
   * policy module chose, hence a `string`.
   */
  reason: string;
  /** The module (or runtime rule set) that decided. */
  module?: string;
  rule?: string;
  /** One short line built from facts only, shown after a deny code; never page data. */
  detail?: string;
}

/** A deny the runtime decides itself, with one of its own codes (a policy module's come through the engine). */
export function deny(
  reason: RuntimeDenyReason,
  extra: Omit<Decision, "decision" | "reason"> = {},
): Decision {
  return { decision: "deny", reason, ...extra };
}
