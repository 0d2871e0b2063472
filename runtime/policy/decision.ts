/**
 * The one decision type: what the policy engine combines, what the boundary returns for a
 * request and what the gate returns for an action.
 *
 * @module
 */

/** What may happen: `confirm` waits for a human and is never an allow by itself. */
export type DecisionKind = "allow" | "deny" | "confirm";

/** A decision and what produced it. */
export interface Decision {
  decision: DecisionKind;
  /** Stable UPPER_SNAKE code; `OK` for a plain allow. */
  reason: string;
  /** The module (or runtime rule set) that decided. */
  module?: string;
  rule?: string;
  /** One short line built from facts only, shown after a deny code; never page data. */
  detail?: string;
}

/** A deny with a stable code. */
export function deny(reason: string, extra: Omit<Decision, "decision" | "reason"> = {}): Decision {
  return { decision: "deny", reason, ...extra };
}
