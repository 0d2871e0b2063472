/**
 * The port through which a human decides a `confirm`. The gate asks it and waits; only
 * `approved` lets the action run. Until the operator console exists, the default answers
 * `CONFIRM_UNAVAILABLE` at once.
 *
 * @module
 */
import type { RequestView } from "../net/mod.ts";
import type { Facts, RuntimeDenyReason } from "../policy/mod.ts";

/**
 * What the operator is shown: the exact request the egress proxy holds, as a
 * `RequestView` (the operator is trusted; none of it goes into the audit). Stored secrets
 * are redacted in it before it gets here.
 */
export interface ApprovalDetails {
  /** The page's origin (as read from CDP). */
  origin: string;
  /** A form's own navigation submission, or a script's write (fetch, XHR). */
  kind: "form" | "script";
  request: RequestView;
}

/** What waits for a decision: built from facts only, never from the model's words. */
export interface PendingApproval {
  session: string;
  agent: string | null;
  tool: string;
  facts: Facts;
  /** The deny-detail line of the action (e.g. `POST form to https://a.test/pay`). */
  detail?: string;
  /** What the operator sees; missing when the action has no form to show. */
  details?: ApprovalDetails;
  /** How long the approval may wait (the policy's `confirm_timeout_seconds`). */
  timeoutMs: number;
}

/** A human's answer. */
export type ApprovalOutcome =
  | { outcome: "approved" }
  | { outcome: "denied"; reason: RuntimeDenyReason }
  | { outcome: "timeout" };

/** Asks a human; `signal` aborts when the agent's call is cancelled or its client leaves. */
export interface Approver {
  request(pending: PendingApproval, signal?: AbortSignal): Promise<ApprovalOutcome>;
}

/** No human is reachable: every confirmation is refused with `CONFIRM_UNAVAILABLE`. */
export const unavailableApprover: Approver = {
  request: () => Promise.resolve({ outcome: "denied", reason: "CONFIRM_UNAVAILABLE" }),
};
