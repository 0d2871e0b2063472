/**
 * The gate backed by the boundary: judges an action's facts (domain rules, private
 * addresses, signed modules), explains a deny, and resolves a `confirm` through the
 * approver: the one place an action can be approved.
 *
 * @module
 */
import { deny } from "../policy/decision.ts";
import { type Approver, unavailableApprover } from "./approver.ts";
import type { Boundary } from "./boundary.ts";
import { denyDetail } from "./deny_detail.ts";
import type { Gate, GateVerdict, ProposedAction } from "./gate.ts";

/** How confirmations are resolved. */
export interface PolicyGateOptions {
  approver?: Approver;
  /** How long one approval may wait (`confirm_timeout_seconds`). */
  confirmTimeoutMs?: number;
  /** Approvals a session may use (`max_confirmations`). */
  maxConfirmations?: number;
}

/** A gate that asks the boundary, and a human for `confirm`. */
export class PolicyGate implements Gate {
  readonly #boundary: Boundary;
  readonly #approver: Approver;
  readonly #timeoutMs: number;
  readonly #maxConfirmations: number;

  constructor(boundary: Boundary, options: PolicyGateOptions = {}) {
    this.#boundary = boundary;
    this.#approver = options.approver ?? unavailableApprover;
    this.#timeoutMs = options.confirmTimeoutMs ?? 120_000;
    this.#maxConfirmations = options.maxConfirmations ?? 10;
  }

  async check(action: ProposedAction, signal?: AbortSignal): Promise<GateVerdict> {
    const { facts } = action;
    const d = await this.#boundary.judge(facts);
    const detail = d.decision === "allow" ? undefined : denyDetail(d.reason, facts);
    if (d.decision !== "confirm") return detail ? { ...d, detail } : d;
    const by = { detail, module: d.module, rule: d.rule };
    if (facts.session.confirmations_used >= this.#maxConfirmations) {
      return deny("CONFIRM_LIMIT", by);
    }
    // What the human sees is read now, from the page; unreadable means nothing to approve.
    const before = await action.approval?.().catch(() => undefined);
    const answer = await this.#approver.request({
      session: action.session.id,
      agent: action.session.agent,
      tool: action.tool,
      facts,
      detail,
      details: before?.details,
      timeoutMs: this.#timeoutMs,
    }, signal);
    if (answer.outcome === "timeout") return deny("CONFIRM_TIMEOUT", by);
    if (answer.outcome !== "approved") return deny(answer.reason, by);
    if (before) {
      const after = await action.approval?.().catch(() => undefined);
      if (after?.fingerprint !== before.fingerprint) return deny("CONFIRM_STALE", by);
    }
    const form = facts.form;
    return {
      decision: "allow",
      reason: "APPROVED",
      module: "approval",
      approved: {
        openWindow: () =>
          form?.submits && form.action_origin && form.action_path !== null
            ? this.#boundary.openWriteWindow(action.session.id, {
              method: form.method,
              origin: form.action_origin,
              path: form.action_path,
            })
            : () => {},
      },
    };
  }
}
