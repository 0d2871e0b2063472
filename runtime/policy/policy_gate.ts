/**
 * The gate backed by the policy engine: reads the facts, asks the modules, explains a deny.
 *
 * @module
 */
import type { Gate, ProposedAction, Verdict as GateVerdict } from "../gate/gate.ts";
import { denyDetail } from "./deny_detail.ts";
import type { PolicyEngine } from "./engine.ts";

/** A gate that asks signed policy modules. */
export class PolicyGate implements Gate {
  #engine: PolicyEngine;

  constructor(engine: PolicyEngine) {
    this.#engine = engine;
  }

  async check(action: ProposedAction): Promise<GateVerdict> {
    if (!action.facts) return { decision: "deny", reason: "FACTS_UNAVAILABLE" };
    const facts = await action.facts();
    const { verdict } = await this.#engine.evaluate(facts);
    if (verdict.decision === "allow") return { decision: "allow" };
    return {
      decision: verdict.decision,
      reason: verdict.reason,
      detail: denyDetail(verdict.reason, facts),
    };
  }
}
