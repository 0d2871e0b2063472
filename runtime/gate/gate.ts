/**
 * The one place every tool call passes before it runs. Whatever a gate returns, a thrown
 * error or an unknown decision is a deny, and a `confirm` nobody resolved is a deny.
 *
 * @module
 */
import { type Decision, deny } from "../policy/decision.ts";
import type { ActionKind, Facts } from "../policy/facts.ts";
import type { ApprovalDetails } from "./approver.ts";

/** A tool call as the gate sees it: its facts, read from the browser. */
export interface ProposedAction {
  tool: string;
  kind: ActionKind;
  facts: Facts;
  session: { id: string; agent: string | null };
  /**
   * Reads what a human approving this action is shown, and a fingerprint of the page it
   * acts on (document and form). Read again after an approval: a different fingerprint means
   * the page changed while the human decided.
   */
  approval?: () => Promise<ApprovalView>;
}

/** What an approval shows, and what it was shown of. */
export interface ApprovalView {
  details: ApprovalDetails;
  fingerprint: string;
}

/** The gate's answer: a decision, plus the write window of an approved confirmation. */
export interface GateVerdict extends Decision {
  /**
   * Set when a human approved this action: opens the write window for exactly the approved
   * request while the action runs; returns the function that closes it.
   */
  approved?: { openWindow(): () => void };
}

/** Decides whether a proposed action may run. */
export interface Gate {
  check(action: ProposedAction, signal?: AbortSignal): Promise<GateVerdict>;
}

/** Every action is allowed (tests of the layers below the gate). */
export const allowAllGate: Gate = {
  check: () => Promise.resolve({ decision: "allow", reason: "OK" }),
};

/** Asks `gate`, turning errors and malformed answers into a deny (fail closed). */
export async function decide(
  gate: Gate,
  action: ProposedAction,
  signal?: AbortSignal,
): Promise<GateVerdict> {
  let verdict: GateVerdict;
  try {
    verdict = await gate.check(action, signal);
  } catch {
    return deny("GATE_ERROR");
  }
  if (verdict?.decision === "allow" || verdict?.decision === "deny") {
    return typeof verdict.reason === "string" ? verdict : deny("GATE_ERROR");
  }
  // A gate that hands back `confirm` did not ask its approver: nobody approved it.
  if (verdict?.decision === "confirm") {
    return { ...verdict, decision: "deny", reason: "CONFIRM_UNAVAILABLE" };
  }
  return deny("GATE_ERROR");
}
