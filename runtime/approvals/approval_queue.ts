/**
 * Pending approvals: the `Approver` a human answers through the operator console. A
 * `confirm` becomes a record the console lists; the gate's call waits for the first of the
 * operator's decision, the policy's timeout and the agent's call going away. What the
 * operator approves is the exact held request (`RequestView`: method, whole URL, every query
 * and body entry). Every outcome is one audit row naming the origin and method only: the
 * URL, its path and query and the entries are shown to the operator but never written down.
 *
 * @module
 */
import type { AuditEvent, AuditSink } from "../audit/audit_row.ts";
import type { ApprovalOutcome, Approver, PendingApproval } from "../gate/approver.ts";
import type { RequestView } from "../net/request_view.ts";
import { log } from "../log.ts";
import { HumanWait } from "./human_wait.ts";
import { Listeners } from "./listeners.ts";

/** Where an approval stands. Everything but `pending` is final. */
export type ApprovalState = "pending" | "approved" | "denied" | "expired" | "withdrawn";

/** One approval, as listed to the console (a copy: changing it changes nothing). */
export interface Approval {
  /** Random and URL-safe: the console puts it in paths. */
  id: string;
  agent: string | null;
  session: string;
  /** The page's origin. */
  origin: string;
  /** The held request's method (escaped, as in `request.method`). */
  method: string;
  /** A form's own navigation submission, or a script's write (fetch, XHR). */
  kind: "form" | "script";
  /** The exact held request, as shown (for the operator's eyes only; secrets redacted). */
  request: RequestView;
  created_at: string;
  expires_at: string;
  state: ApprovalState;
  /** When it left `pending`. */
  decided_at?: string;
  /** Who decided (`console`, `api`), for approved and denied ones. */
  decided_by?: string;
}

/** What the console's live view hears. */
export interface ApprovalEvent {
  type: "added" | "decided" | "expired" | "withdrawn";
  approval: Approval;
}

/** An operator's decision. */
export type ApprovalDecision = "approve" | "deny";

/**
 * The answer of `decide()`: `not_pending` when the approval was already decided, expired
 * or withdrawn (the API answers 409), `unknown` when no such id is known (404).
 */
export type DecideResult = "ok" | "not_pending" | "unknown";

/** Options of `ApprovalQueue`. */
export interface ApprovalQueueOptions {
  /** Finished approvals kept for the console's history; default 200. */
  keepDecided?: number;
  /** The clock (tests); default `Date.now`. */
  now?: () => number;
}

interface Entry {
  record: Approval;
  wait: HumanWait<ApprovalOutcome>;
}

/** Reasons the audit rows and the gate see. */
const APPROVED = "APPROVED";
const DENIED = "CONFIRM_DENIED";
const TIMEOUT = "CONFIRM_TIMEOUT";
const WITHDRAWN = "CONFIRM_WITHDRAWN";

/** The operator console's `Approver`: a queue of approvals waiting for a human. */
export class ApprovalQueue implements Approver {
  readonly #audit: AuditSink;
  readonly #keep: number;
  readonly #now: () => number;
  readonly #pending = new Map<string, Entry>();
  /** Finished approvals, newest first. */
  #decided: Approval[] = [];
  readonly #listeners = new Listeners<ApprovalEvent>();

  /** `audit` receives one row per outcome; a failed row turns an approval into a deny. */
  constructor(audit: AuditSink, options: ApprovalQueueOptions = {}) {
    this.#audit = audit;
    this.#keep = Math.max(0, options.keepDecided ?? 200);
    this.#now = options.now ?? Date.now;
  }

  /**
   * Lists `pending` and waits for the operator. Without `details` there is nothing to show
   * a human: answers `CONFIRM_UNAVAILABLE` at once, lists nothing and writes no row (the
   * gate's action row records the deny).
   */
  request(pending: PendingApproval, signal?: AbortSignal): Promise<ApprovalOutcome> {
    const details = pending.details;
    if (!details) return Promise.resolve({ outcome: "denied", reason: "CONFIRM_UNAVAILABLE" });
    const now = this.#now();
    const record: Approval = {
      id: crypto.randomUUID(),
      agent: pending.agent,
      session: pending.session,
      origin: details.origin,
      method: details.request.method,
      kind: details.kind,
      request: structuredClone(details.request),
      created_at: new Date(now).toISOString(),
      expires_at: new Date(now + Math.max(0, pending.timeoutMs || 0)).toISOString(),
      state: "pending",
    };
    if (signal?.aborted) {
      this.#finish(record, "withdrawn");
      return Promise.resolve({ outcome: "denied", reason: WITHDRAWN });
    }
    const wait = new HumanWait<ApprovalOutcome>(pending.timeoutMs, signal, {
      timeout: () => {
        this.#pending.delete(record.id);
        this.#finish(record, "expired");
        return { outcome: "timeout" };
      },
      abort: () => {
        this.#pending.delete(record.id);
        this.#finish(record, "withdrawn");
        return { outcome: "denied", reason: WITHDRAWN };
      },
    });
    this.#pending.set(record.id, { record, wait });
    this.#listeners.emit({ type: "added", approval: copy(record) });
    return wait.promise;
  }

  /**
   * The operator's answer to approval `id`; `by` names the door it came through
   * (`console`, `api`). An approval whose audit row cannot be written is denied instead
   * (`AUDIT_UNAVAILABLE`): the record then says `denied`.
   */
  decide(id: string, decision: ApprovalDecision, by: string): DecideResult {
    const entry = this.#pending.get(id);
    if (!entry) return this.#decided.some((a) => a.id === id) ? "not_pending" : "unknown";
    this.#pending.delete(id);
    const { record, wait } = entry;
    record.decided_by = by.slice(0, 40);
    if (decision === "deny") {
      this.#finish(record, "denied");
      wait.settle({ outcome: "denied", reason: DENIED });
      return "ok";
    }
    // The row comes first: an approval nobody can read back later does not happen.
    const written = this.#finish(record, "approved");
    wait.settle(
      written ? { outcome: "approved" } : { outcome: "denied", reason: "AUDIT_UNAVAILABLE" },
    );
    return "ok";
  }

  /** Approvals newest first: the pending ones, the finished ones, or both (pending first). */
  list(state?: "pending" | "decided"): Approval[] {
    const pending = [...this.#pending.values()].map((e) => e.record).reverse();
    const all = state === "pending"
      ? pending
      : state === "decided"
      ? this.#decided
      : [...pending, ...this.#decided];
    return all.map(copy);
  }

  /** Hears every change; returns the unsubscribe function. */
  subscribe(listener: (event: ApprovalEvent) => void): () => void {
    return this.#listeners.subscribe(listener);
  }

  /** Withdraws every pending approval (the runtime is stopping). */
  close(): void {
    for (const { wait } of [...this.#pending.values()]) wait.cancel();
  }

  /**
   * Moves `record` to its final `state`: audit row, history, event. Returns false when the
   * row could not be written; an approval is then recorded as denied.
   */
  #finish(record: Approval, state: Exclude<ApprovalState, "pending">): boolean {
    const written = this.#write(record, state);
    record.state = state === "approved" && !written ? "denied" : state;
    record.decided_at = new Date(this.#now()).toISOString();
    this.#decided.unshift(record);
    if (this.#decided.length > this.#keep) this.#decided.length = this.#keep;
    const type = state === "expired" || state === "withdrawn" ? state : "decided";
    this.#listeners.emit({ type, approval: copy(record) });
    return written;
  }

  /** The outcome's audit row: origin and method only, never the URL or an entry. */
  #write(record: Approval, state: Exclude<ApprovalState, "pending">): boolean {
    const [decision, reason]: [AuditEvent["decision"], string] = state === "approved"
      ? ["allow", APPROVED]
      : state === "denied"
      ? ["deny", DENIED]
      : state === "expired"
      ? ["deny", TIMEOUT]
      : ["event", WITHDRAWN];
    try {
      this.#audit.append({
        session: record.session,
        agent: record.agent,
        kind: "approval",
        source: "operator",
        origin: originOf(record.origin),
        method: record.method,
        decision,
        reason,
        rule: state === "approved" || state === "denied" ? record.decided_by ?? null : null,
      });
      return true;
    } catch (err) {
      log(`approvals: audit row not written (${(err as { code?: string }).code ?? "error"})`);
      return false;
    }
  }
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

function copy(a: Approval): Approval {
  return structuredClone(a);
}
