/**
 * Approvals: the gate's `Approver` and the console's port, one kind of the decision board
 * (`DecisionBoard`). A `confirm` becomes a record the console lists (every runtime's, on a
 * shared store); the gate's call waits for the first of the operator's decision, the policy's
 * timeout and the call going away. What the operator approves is the exact held request
 * (`RequestView`: method, whole URL, every query and body entry). Every outcome is one audit
 * row of the runtime whose call waited, naming the origin and method only: the URL, its path
 * and query and the entries are shown to the operator but never written down. An approval
 * whose row cannot be written is denied (`AUDIT_UNAVAILABLE`).
 *
 * @module
 */
import type {
  Approval,
  ApprovalState,
  AuditEvent,
  DecisionStore,
  SettleResult,
} from "../store/mod.ts";
import type { ApprovalOutcome, Approver, PendingApproval } from "../gate/mod.ts";
import {
  type BoardAudit,
  DecisionBoard,
  type DecisionBoardOptions,
  type DecisionKindRules,
  waitMs,
} from "./decision_board.ts";

/** What the console's live view hears. */
export interface ApprovalEvent {
  type: "added" | "decided" | "expired" | "withdrawn";
  approval: Approval;
}

/** An operator's decision. */
export type ApprovalDecision = "approve" | "deny";

/** Reasons the audit rows and the gate see. */
const APPROVED = "APPROVED";
const DENIED = "CONFIRM_DENIED";
const TIMEOUT = "CONFIRM_TIMEOUT";
const WITHDRAWN = "CONFIRM_WITHDRAWN";

/** An approval's rules on the board: its audit rows, origin and method only. */
const RULES: DecisionKindRules<"approval", ApprovalEvent, "decided"> = {
  noun: "an approval",
  finished: "decided",
  event: (approval) => ({ type: eventOf(approval.state), approval }),
  acted: "approved",
  row(record, state, final) {
    const [decision, reason]: [AuditEvent["decision"], string] = state === "approved"
      ? ["allow", APPROVED]
      : state === "denied"
      ? ["deny", DENIED]
      : state === "expired"
      ? ["deny", TIMEOUT]
      : ["event", WITHDRAWN];
    return {
      session: record.session,
      agent: record.agent,
      kind: "approval",
      source: "operator",
      origin: originOf(record.origin),
      method: record.method,
      decision,
      reason,
      rule: state === "approved" || state === "denied" ? final?.decided_by ?? null : null,
    };
  },
};

/**
 * The pending record of `pending` (a random id, the exact held request copied, `expires_at`
 * the policy's timeout from `now`), or undefined when there is nothing to show a human (no
 * `details`).
 */
export function approvalRecord(pending: PendingApproval, now: number): Approval | undefined {
  const details = pending.details;
  if (!details) return undefined;
  return {
    id: crypto.randomUUID(),
    agent: pending.agent,
    session: pending.session,
    origin: details.origin,
    method: details.request.method,
    kind: details.kind,
    request: structuredClone(details.request),
    created_at: new Date(now).toISOString(),
    // Bounded like the wait's timer: an infinite timeout would be no date at all.
    expires_at: new Date(now + waitMs(pending.timeoutMs)).toISOString(),
    state: "pending",
  };
}

/**
 * The `Approver` and console port of one runtime, over its approvals' store (`list`,
 * `subscribe` and `close` are the board's).
 */
export class ApprovalBoard extends DecisionBoard<"approval", ApprovalEvent, "decided">
  implements Approver {
  /** `audit` receives one row per outcome of this runtime's calls. */
  constructor(store: DecisionStore<"approval">, audit: BoardAudit, options?: DecisionBoardOptions) {
    super(store, audit, RULES, options);
  }

  /**
   * Posts `pending` and waits for a decision (taken on any runtime of a shared store), the
   * policy's timeout or `signal`. Without `details` (or once closed) there is nothing to show
   * a human: `CONFIRM_UNAVAILABLE` at once, nothing posted, no row.
   */
  async request(pending: PendingApproval, signal?: AbortSignal): Promise<ApprovalOutcome> {
    const record = approvalRecord(pending, this.now());
    if (!record || this.closed) return { outcome: "denied", reason: "CONFIRM_UNAVAILABLE" };
    const end = await this.run(record, waitMs(pending.timeoutMs), signal);
    // Nobody could be asked: no row, the call's refusal is what the agent sees.
    if (end.kind === "unposted") return { outcome: "denied", reason: "CONFIRM_UNAVAILABLE" };
    switch (end.state) {
      case "approved":
        return end.written
          ? { outcome: "approved" }
          : { outcome: "denied", reason: "AUDIT_UNAVAILABLE" };
      case "denied":
        return { outcome: "denied", reason: DENIED };
      case "expired":
        return { outcome: "timeout" };
      case "withdrawn":
        return { outcome: "denied", reason: WITHDRAWN };
    }
  }

  /**
   * The operator's answer to approval `id`; `by` names the door (`console`, `api`).
   * `not_pending` when already decided, expired or withdrawn (409), `unknown` when none (404).
   */
  async decide(id: string, decision: ApprovalDecision, by: string): Promise<SettleResult> {
    return await this.outcome(id, { state: decision === "approve" ? "approved" : "denied", by });
  }
}

function eventOf(state: ApprovalState): ApprovalEvent["type"] {
  return state === "pending"
    ? "added"
    : state === "expired" || state === "withdrawn"
    ? state
    : "decided";
}

/** The origin of `value`, or null: a page origin that is anything longer is cut here. */
function originOf(value: string): string | null {
  try {
    const origin = new URL(value).origin;
    return origin === "null" ? null : origin;
  } catch {
    return null;
  }
}
