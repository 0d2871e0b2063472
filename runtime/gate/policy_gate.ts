/**
 * The gate backed by the policy engine: reads the facts, asks the boundary (domain rules,
 * private addresses, signed modules), explains a deny.
 *
 * @module
 */
import type { Boundary } from "./boundary.ts";
import type { Gate, ProposedAction, Verdict as GateVerdict } from "./gate.ts";
import { denyDetail } from "./deny_detail.ts";

/** A gate that asks the boundary. */
export class PolicyGate implements Gate {
  #boundary: Boundary;

  constructor(boundary: Boundary) {
    this.#boundary = boundary;
  }

  async check(action: ProposedAction): Promise<GateVerdict> {
    if (!action.facts) return { decision: "deny", reason: "FACTS_UNAVAILABLE" };
    const facts = await action.facts();
    const j = await this.#boundary.judge(facts);
    const about = {
      origin: facts.target?.origin ?? facts.element?.link_origin ?? facts.form?.action_origin ??
        facts.frame.origin,
      method: facts.form?.submits ? facts.form.method : facts.method,
      module: j.module,
      rule: j.rule,
    };
    if (j.decision === "allow") return { decision: "allow", about };
    return { decision: j.decision, reason: j.reason, detail: denyDetail(j.reason, facts), about };
  }
}
