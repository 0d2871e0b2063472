/**
 * The one place every tool call passes before it runs. Today it allows everything; the
 * policy, approval and taint issues fill it. Whatever it returns, a thrown error or an
 * unknown decision is a deny.
 *
 * @module
 */
import { OmotaiError } from "../errors.ts";
import type { Facts } from "../policy/facts.ts";

/** What kind of action a tool proposes; mirrors the policy facts' `kind`. */
export type ActionKind =
  | "navigate"
  | "back"
  | "snapshot"
  | "click"
  | "type"
  | "select"
  | "key"
  | "wait"
  | "tab";

/** A tool call as the gate sees it. */
export interface ProposedAction {
  tool: string;
  kind: ActionKind;
  /** Validated arguments. Text to type is included: gates must never echo it. */
  args: Readonly<Record<string, unknown>>;
  /** Reads the action's facts from the browser (only when a gate needs them). */
  facts?: () => Promise<Facts>;
}

/** What the audit row of an action records besides its decision (origin, never a path). */
export interface VerdictAbout {
  origin?: string | null;
  method?: string | null;
  module?: string;
  rule?: string;
}

/** The gate's answer. */
export type Verdict =
  & (
    | { decision: "allow" }
    | { decision: "deny" | "confirm"; reason: string; detail?: string }
  )
  & { about?: VerdictAbout };

/** Decides whether a proposed action may run. */
export interface Gate {
  check(action: ProposedAction): Promise<Verdict>;
}

/** The foundation's gate: every action is allowed. */
export const allowAllGate: Gate = {
  check: () => Promise.resolve({ decision: "allow" }),
};

/** Errors the model should see as themselves rather than as a policy deny. */
const PASS_THROUGH = new Set(["STALE_REF", "UNKNOWN_REF", "BROWSER_LOST", "INVALID_ARGUMENTS"]);

/** Asks `gate`, turning errors and malformed answers into a deny (fail closed). */
export async function decide(gate: Gate, action: ProposedAction): Promise<Verdict> {
  let verdict: Verdict;
  try {
    verdict = await gate.check(action);
  } catch (err) {
    // The action cannot run either way; a stale ref is more useful to hear than GATE_ERROR.
    if (err instanceof OmotaiError && PASS_THROUGH.has(err.code)) throw err;
    return { decision: "deny", reason: "GATE_ERROR" };
  }
  const about = verdict?.about ? { about: verdict.about } : {};
  if (verdict?.decision === "allow") return { decision: "allow", ...about };
  if (verdict?.decision === "deny") return verdict;
  // `confirm` needs the approval console (a later issue); until then it cannot pass.
  if (verdict?.decision === "confirm") {
    return {
      decision: "deny",
      reason: "CONFIRM_UNAVAILABLE",
      detail: verdict.detail,
      ...about,
    };
  }
  return { decision: "deny", reason: "GATE_ERROR" };
}
