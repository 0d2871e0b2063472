/**
 * The one place every tool call passes before it runs. Whatever a gate returns, a thrown
 * error or an unknown decision is a deny, and a `confirm` nobody resolved is a deny.
 *
 * @module
 */
import { type ActionKind, type Decision, deny, type Facts } from "../policy/mod.ts";
import type { HeldOutcome } from "./write_hold.ts";

/** A tool call as the gate sees it: its facts, read from the browser. */
export interface ProposedAction {
  tool: string;
  kind: ActionKind;
  facts: Facts;
  session: { id: string; agent: string | null };
}

/** The write hold of one action while it runs. */
export interface OpenedHold {
  /** Resolves once no held write of the action waits for a human. */
  drain(): Promise<void>;
  /** What each held write came to, in order. */
  readonly outcomes: readonly HeldOutcome[];
  /** Closes the hold: later writes are refused as `read_only` says. */
  close(): void;
}

/** What the pipeline hands a hold when the action starts. */
export interface HoldContext {
  /** The agent's call: cancelling it withdraws every pending approval. */
  signal?: AbortSignal;
  /** The session's approvals used so far, and counting one more. */
  confirmations: { used(): number; count(): void };
}

/** The gate's answer: a decision, plus the write hold the action runs under. */
export interface GateVerdict extends Decision {
  /**
   * Set when the action may write only what a human approves (a `confirm`, or every action
   * when the policy lets script writes be asked for): the pipeline opens it for exactly the
   * time the action runs, and waits for its held writes before it answers.
   */
  hold?: { open(context: HoldContext): OpenedHold };
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
