/**
 * The port through which a human decides a `confirm`. The gate asks it and waits; only
 * `approved` lets the action run. Until the operator console exists, the default answers
 * `CONFIRM_UNAVAILABLE` at once.
 *
 * @module
 */
import type { Facts } from "../policy/facts.ts";

/** What waits for a decision: built from facts only, never from the model's words. */
export interface PendingApproval {
  session: string;
  agent: string | null;
  tool: string;
  facts: Facts;
  /** The deny-detail line of the action (e.g. `POST form to https://a.test/pay`). */
  detail?: string;
}

/** A human's answer. */
export type ApprovalOutcome =
  | { outcome: "approved" }
  | { outcome: "denied"; reason: string }
  | { outcome: "timeout" };

/** Asks a human; `signal` aborts when the agent's call is cancelled or its client leaves. */
export interface Approver {
  request(pending: PendingApproval, signal?: AbortSignal): Promise<ApprovalOutcome>;
}

/** No human is reachable: every confirmation is refused with `CONFIRM_UNAVAILABLE`. */
export const unavailableApprover: Approver = {
  request: () => Promise.resolve({ outcome: "denied", reason: "CONFIRM_UNAVAILABLE" }),
};
