/**
 * Approvals shared by every runtime of a tenant: the `Approver` and the console's port of a
 * runtime whose store is PostgreSQL, over a {@link PgApprovalBoard}. A `confirm` raised on one
 * runtime is posted to the board, listed on every runtime's console, and decided on any of
 * them; the runtime whose call waits hears the decision within a second and answers it.
 *
 * Who does what: exactly one outcome wins, by the board's conditional update (an approve on
 * one runtime, a deny on another, the poster's timeout and its caller's abort all race
 * there). The WAITING runtime alone writes the outcome's audit row, once, before its call
 * returns: so every outcome is one row in the log of the runtime whose agent acted, and an
 * approval whose row cannot be written is denied (`AUDIT_UNAVAILABLE`), as with
 * `ApprovalQueue`. The row names the origin and method only, never the URL or an entry.
 *
 * Fail closed: a post the database refuses is `CONFIRM_UNAVAILABLE`; a database that fails
 * while the call waits is waited out until the policy's timeout, and a board that cannot be
 * reached at the deadline is a timeout, never an approval.
 *
 * @module
 */
import type { AuditEvent } from "../audit/audit_row.ts";
import type { ApprovalOutcome, Approver, PendingApproval } from "../gate/approver.ts";
import { log } from "../log.ts";
import type {
  Approval,
  ApprovalDecision,
  ApprovalEvent,
  ApprovalState,
  DecideResult,
} from "./approval_queue.ts";
import { Listeners } from "./listeners.ts";
import { BoardClient, codeOf } from "./board_client.ts";
import { BOARD_POLL_MS, type PgApprovalBoard } from "./pg_approval_board.ts";

/** Where the outcome's audit row goes (`AuditLog`, `PgAuditLog`). */
export interface SharedApprovalsAudit {
  /** Resolves once the row is stored; rejects when it cannot be. */
  appendSoon(event: AuditEvent): Promise<unknown>;
}

/** Options of `SharedApprovals`. */
export interface SharedApprovalsOptions {
  /**
   * The clock of the records' `created_at` and `expires_at` (tests); default `Date.now`. The
   * board's own checks of `expires_at` use the database's clock and this process's.
   */
  now?: () => number;
}

/** Reasons the audit rows and the gate see (the same as `ApprovalQueue`'s). */
const APPROVED = "APPROVED";
const DENIED = "CONFIRM_DENIED";
const TIMEOUT = "CONFIRM_TIMEOUT";
const WITHDRAWN = "CONFIRM_WITHDRAWN";

/** The longest delay a timer takes (larger ones fire at once). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/**
 * The pending record of `pending`, as `ApprovalQueue` builds it (a random id, the exact held
 * request copied, `expires_at` the policy's timeout from `now`), or undefined when there is
 * nothing to show a human (no `details`).
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

/** How long a wait of `timeoutMs` lasts: not finite or negative is no time at all. */
function waitMs(timeoutMs: number): number {
  return Number.isFinite(timeoutMs) ? Math.min(Math.max(0, timeoutMs), MAX_DELAY_MS) : 0;
}

/**
 * The `Approver` and console port of one runtime of a tenant whose approvals live in
 * PostgreSQL. It neither opens nor closes the board: the board's owner stops its listening.
 */
export class SharedApprovals implements Approver {
  readonly #board: PgApprovalBoard;
  readonly #audit: SharedApprovalsAudit;
  readonly #now: () => number;
  readonly #listeners = new Listeners<ApprovalEvent>();
  readonly #client: BoardClient<Approval>;

  /** `audit` receives one row per outcome of this runtime's calls. */
  constructor(
    board: PgApprovalBoard,
    audit: SharedApprovalsAudit,
    options: SharedApprovalsOptions = {},
  ) {
    this.#board = board;
    this.#audit = audit;
    this.#now = options.now ?? Date.now;
    this.#client = new BoardClient("approvals", board, BOARD_POLL_MS, (approval) => {
      const type = approval.state === "pending"
        ? "added"
        : approval.state === "expired" || approval.state === "withdrawn"
        ? approval.state
        : "decided";
      this.#listeners.emit({ type, approval });
    });
  }

  /**
   * Posts `pending` to the tenant's board and waits for a decision taken on any runtime, the
   * policy's timeout or `signal`. Without `details` (or once closed) there is nothing to show
   * a human: `CONFIRM_UNAVAILABLE` at once, nothing posted, no row.
   */
  request(pending: PendingApproval, signal?: AbortSignal): Promise<ApprovalOutcome> {
    const record = approvalRecord(pending, this.#now());
    if (!record || this.#client.closed) {
      return Promise.resolve({ outcome: "denied", reason: "CONFIRM_UNAVAILABLE" });
    }
    return this.#client.track(this.#ask(record, waitMs(pending.timeoutMs), signal));
  }

  /**
   * The operator's answer to approval `id`, whichever runtime posted it; `by` names the door
   * (`console`, `api`). `ok` when it won; the waiting runtime then answers its call.
   * Rejects with `DB_UNAVAILABLE` when the database cannot be reached.
   */
  async decide(id: string, decision: ApprovalDecision, by: string): Promise<DecideResult> {
    return await this.#board.decide(id, decision, by);
  }

  /**
   * The tenant's approvals of every runtime, newest first: the pending ones, the finished
   * ones, or both (pending first). Rejects with `DB_UNAVAILABLE` when the database cannot be
   * reached.
   */
  async list(state?: "pending" | "decided"): Promise<Approval[]> {
    const pending = state === "decided" ? [] : (await this.#board.list("pending")).reverse();
    const decided = state === "pending" ? [] : await this.#board.list("decided");
    return [...pending, ...decided];
  }

  /**
   * Hears every change to the tenant's approvals made by any runtime (`added`, `decided`,
   * `expired`, `withdrawn`); returns the unsubscribe function. A notification lost while the
   * database was unreachable is not replayed: the console's list is the truth.
   */
  subscribe(listener: (event: ApprovalEvent) => void): () => void {
    const off = this.#listeners.subscribe(listener);
    const unhear = this.#client.hear();
    return () => {
      off();
      unhear();
    };
  }

  /**
   * The runtime is stopping: withdraws this runtime's waiting calls (each writes its row),
   * stops hearing the board and resolves once that work is done. The board stays open.
   */
  async close(): Promise<void> {
    await this.#client.close();
  }

  /** Posts `record`, waits, ends it (`BoardClient.settle`) and writes its row. */
  async #ask(record: Approval, delay: number, signal?: AbortSignal): Promise<ApprovalOutcome> {
    // Past the policy's deadline both asks of the board are short-bounded: the call ends
    // soon, and one whose board cannot say in time is denied (fail closed).
    const end = await this.#client.settle(record, delay, { noun: "an approval" }, signal);
    // Nobody could be asked: no row, the call's refusal is what the agent sees.
    if (end.kind === "unposted") return { outcome: "denied", reason: "CONFIRM_UNAVAILABLE" };
    // A call gone (before its post too: never shown to anyone) is withdrawn, as the queue's
    // is: whatever won just before, nothing runs for it.
    return await this.#outcome(record, end.state, end.record);
  }

  /**
   * The call's answer for final `state`, after its audit row: an approval whose row cannot be
   * written is denied.
   */
  async #outcome(
    record: Approval,
    state: Exclude<ApprovalState, "pending">,
    final?: Approval,
  ): Promise<ApprovalOutcome> {
    const [decision, reason]: [AuditEvent["decision"], string] = state === "approved"
      ? ["allow", APPROVED]
      : state === "denied"
      ? ["deny", DENIED]
      : state === "expired"
      ? ["deny", TIMEOUT]
      : ["event", WITHDRAWN];
    let written = true;
    try {
      // Origin and method only: the URL, its query and the entries were the operator's to see.
      await this.#audit.appendSoon({
        session: record.session,
        agent: record.agent,
        kind: "approval",
        source: "operator",
        origin: originOf(record.origin),
        method: record.method,
        decision,
        reason,
        rule: state === "approved" || state === "denied" ? final?.decided_by ?? null : null,
      });
    } catch (err) {
      log(`approvals: audit row not written (${codeOf(err)})`);
      written = false;
    }
    switch (state) {
      case "approved":
        if (written) return { outcome: "approved" };
        // The board says approved; nothing runs: it is told so (best effort: the database
        // may be what failed).
        await this.#board.unrun(record.id).catch((err) =>
          log(`approvals: an unrun approval could not be recorded (${codeOf(err)})`)
        );
        return { outcome: "denied", reason: "AUDIT_UNAVAILABLE" };
      case "denied":
        return { outcome: "denied", reason: DENIED };
      case "expired":
        return { outcome: "timeout" };
      case "withdrawn":
        return { outcome: "denied", reason: WITHDRAWN };
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
