/**
 * The gate backed by the boundary: judges an action's facts (domain rules, private
 * addresses, signed modules) and explains a deny. A `confirm` does not ask anybody about
 * the action: the action runs under a write hold (`write_hold.ts`), and each write it causes
 * is held whole where it leaves and shown to the operator, who approves that request.
 *
 * @module
 */
import { deny } from "../policy/mod.ts";
import { type Approver, unavailableApprover } from "./approver.ts";
import type { Boundary } from "./boundary.ts";
import { denyDetail } from "./deny_detail.ts";
import type { Gate, GateVerdict, HoldContext, OpenedHold, ProposedAction } from "./gate.ts";
import { actionHold, type HeldForm } from "./write_hold.ts";

/** How confirmations are resolved. */
export interface PolicyGateOptions {
  approver?: Approver;
  /** How long one approval may wait (`confirm_timeout_seconds`). */
  confirmTimeoutMs?: number;
  /** Approvals a session may use (`max_confirmations`). */
  maxConfirmations?: number;
  /**
   * Whether writes other than a confirmed form's own submission (a page script's fetch or
   * XHR during an action) may be asked for (`script_writes: confirm`); default no.
   */
  scriptWrites?: boolean;
  /** Redacts stored secrets from what the operator is shown; default: nothing to redact. */
  redact?: (text: string) => string;
}

/** A gate that asks the boundary, and a human for `confirm`. */
export class PolicyGate implements Gate {
  readonly #boundary: Boundary;
  readonly #approver: Approver;
  readonly #timeoutMs: number;
  readonly #maxConfirmations: number;
  readonly #scriptWrites: boolean;
  readonly #redact: (text: string) => string;

  constructor(boundary: Boundary, options: PolicyGateOptions = {}) {
    this.#boundary = boundary;
    this.#approver = options.approver ?? unavailableApprover;
    this.#timeoutMs = options.confirmTimeoutMs ?? 120_000;
    this.#maxConfirmations = options.maxConfirmations ?? 10;
    this.#scriptWrites = options.scriptWrites ?? false;
    this.#redact = options.redact ?? ((t) => t);
  }

  async check(action: ProposedAction, _signal?: AbortSignal): Promise<GateVerdict> {
    const { facts } = action;
    const d = await this.#boundary.judge(facts);
    const detail = d.decision === "allow" ? undefined : denyDetail(d.reason, facts);
    if (d.decision === "allow") {
      return this.#scriptWrites ? { ...d, hold: this.#hold(action, undefined) } : d;
    }
    if (d.decision !== "confirm") return detail ? { ...d, detail } : d;
    const by = { detail, module: d.module, rule: d.rule };
    if (facts.session.confirmations_used >= this.#maxConfirmations) {
      return deny("CONFIRM_LIMIT", by);
    }
    const form = facts.form?.submits
      ? {
        method: facts.form.method,
        origin: facts.form.action_origin,
        path: facts.form.action_path,
      }
      : undefined;
    // The action itself writes nothing: what it sends is held where it leaves and shown to
    // the operator whole, who approves that request (or not).
    return {
      decision: "allow",
      reason: "WRITE_HELD",
      module: d.module,
      rule: d.rule,
      ...(detail ? { detail } : {}),
      hold: this.#hold(action, form),
    };
  }

  #hold(action: ProposedAction, form: HeldForm | undefined): GateVerdict["hold"] {
    return {
      open: (context: HoldContext): OpenedHold => {
        const hold = actionHold({
          approver: this.#approver,
          session: action.session.id,
          agent: action.session.agent,
          tool: action.tool,
          form,
          pageOrigin: action.facts.frame?.origin ?? null,
          scriptWrites: this.#scriptWrites,
          timeoutMs: this.#timeoutMs,
          maxConfirmations: this.#maxConfirmations,
          confirmations: context.confirmations,
          redact: this.#redact,
          signal: context.signal,
        });
        const close = this.#boundary.openHold(action.session.id, hold);
        return { drain: () => hold.drain(), outcomes: hold.outcomes, close };
      },
    };
  }
}
