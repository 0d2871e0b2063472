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
import { BOARD_POLL_MS, type PgApprovalBoard } from "./pg_approval_board.ts";
import { bounded } from "../store/bounded.ts";

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

/** Past the deadline, how long the board may take to say how the approval ended. */
export const DEADLINE_GRACE_MS = 3_000;

/** Ids whose last state the live view remembers, to tell an addition from a decision. */
const SEEN_MAX = 1_000;

/** Why a wait stopped before the board answered. */
type Ended = "timeout" | "withdrawn";

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
  #listening = 0;
  #offChange: (() => void) | undefined;
  /** The last state the live view announced, per id (insertion order: oldest first). */
  readonly #seen = new Map<string, ApprovalState>();
  /** This runtime's waiting calls: what `close()` withdraws. */
  readonly #waits = new Set<(why: Ended) => void>();
  /** Work still running (calls, the live view's reads): what `close()` waits for. */
  readonly #running = new Set<Promise<unknown>>();
  #closed = false;

  /** `audit` receives one row per outcome of this runtime's calls. */
  constructor(
    board: PgApprovalBoard,
    audit: SharedApprovalsAudit,
    options: SharedApprovalsOptions = {},
  ) {
    this.#board = board;
    this.#audit = audit;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Posts `pending` to the tenant's board and waits for a decision taken on any runtime, the
   * policy's timeout or `signal`. Without `details` (or once closed) there is nothing to show
   * a human: `CONFIRM_UNAVAILABLE` at once, nothing posted, no row.
   */
  request(pending: PendingApproval, signal?: AbortSignal): Promise<ApprovalOutcome> {
    const record = approvalRecord(pending, this.#now());
    if (!record || this.#closed) {
      return Promise.resolve({ outcome: "denied", reason: "CONFIRM_UNAVAILABLE" });
    }
    return this.#track(this.#ask(record, waitMs(pending.timeoutMs), signal));
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
    // The board is asked only while someone listens: no reads for a console nobody watches.
    if (this.#listening++ === 0 && !this.#closed) {
      this.#offChange = this.#board.onChange((id) => this.#changed(id));
    }
    let on = true;
    return () => {
      if (!on) return;
      on = false;
      off();
      if (--this.#listening === 0) this.#stopHearing();
    };
  }

  /**
   * The runtime is stopping: withdraws this runtime's waiting calls (each writes its row),
   * stops hearing the board and resolves once that work is done. The board stays open.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const withdraw of [...this.#waits]) withdraw("withdrawn");
    this.#stopHearing();
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  #stopHearing(): void {
    this.#offChange?.();
    this.#offChange = undefined;
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const done = () => this.#running.delete(work);
    work.then(done, done);
    return work;
  }

  /** Posts `record`, waits, ends it and writes its row. */
  async #ask(record: Approval, delay: number, signal?: AbortSignal): Promise<ApprovalOutcome> {
    // A call already gone is never shown to anyone: its row says so, as the queue's does.
    if (signal?.aborted) return await this.#outcome(record, "withdrawn");
    const started = performance.now();
    try {
      await this.#board.post(record);
    } catch (err) {
      // Nobody could be asked. Should the insert have landed after all, its row simply runs
      // out: nobody waits on it, and a decision past `expires_at` is refused.
      log(`approvals: an approval could not be posted (${codeOf(err)})`);
      return { outcome: "denied", reason: "CONFIRM_UNAVAILABLE" };
    }
    const settled = await this.#wait(
      record.id,
      Math.max(0, delay - (performance.now() - started)),
      signal,
    );
    if (settled === "withdrawn") {
      // The call is gone: whatever won just before, nothing runs for it. The board's row
      // says what the operator did; the audit says what became of the call.
      await this.#board.finish(record.id, "withdrawn").catch((err) =>
        log(`approvals: an approval could not be withdrawn (${codeOf(err)})`)
      );
      return await this.#outcome(record, "withdrawn");
    }
    if (settled !== "timeout" && settled.state !== "pending") {
      return await this.#outcome(record, settled.state, settled);
    }
    // Time is up here: expire it, unless a decision got there first, which is then honoured.
    // Both asks are short-bounded: past the policy's deadline the call ends soon, and one
    // whose board cannot say in time is denied (fail closed).
    try {
      if (await bounded(this.#board.finish(record.id, "expired"), DEADLINE_GRACE_MS)) {
        return await this.#outcome(record, "expired");
      }
      const final = await bounded(this.#board.get(record.id), DEADLINE_GRACE_MS);
      if (final && final.state !== "pending") {
        return await this.#outcome(record, final.state, final);
      }
    } catch (err) {
      log(`approvals: the board could not be reached at the deadline (${codeOf(err)})`);
    }
    // Fail closed: what the board holds could not be read, so the call does not run.
    return await this.#outcome(record, "expired");
  }

  /**
   * Waits for approval `id` to leave `pending` on the board, until `delay` runs out or the
   * call goes away. A database failure while waiting is waited out: the board is asked again
   * until the deadline.
   */
  async #wait(id: string, delay: number, signal?: AbortSignal): Promise<Approval | Ended> {
    const stop = new AbortController();
    let ended: Ended | undefined;
    const end = (why: Ended) => {
      ended ??= why;
      stop.abort();
    };
    const timer = setTimeout(() => end("timeout"), delay);
    const onAbort = () => end("withdrawn");
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#waits.add(end);
    let failed = false;
    // Gone (or the runtime stopping) while the post was on its way.
    if (signal?.aborted || this.#closed) end("withdrawn");
    try {
      while (!stop.signal.aborted) {
        try {
          const final = await this.#board.settled(id, stop.signal);
          // The call went away while the board answered: it is withdrawn all the same.
          return ended === "withdrawn" ? ended : final;
        } catch (err) {
          if (stop.signal.aborted) break;
          // Once per wait: an outage would otherwise log a line per poll for every call.
          if (!failed) log(`approvals: waiting on an approval failed (${codeOf(err)}); waiting on`);
          failed = true;
          await pause(BOARD_POLL_MS, stop.signal);
        }
      }
      return ended ?? "timeout";
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      this.#waits.delete(end);
    }
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
        return written
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

  /** A notification named `id`: read it back and tell the live view what changed. */
  #changed(id: string): void {
    this.#track(
      this.#board.get(id).then((approval) => {
        // Another tenant's (the channel is shared), or gone from view: nothing to tell.
        if (!approval || this.#offChange === undefined) return;
        const before = this.#seen.get(id);
        // Reads may come back out of order; a state moves once, from pending to final, so
        // only a first sight or that one move is news.
        if (before !== undefined && (before !== "pending" || approval.state === "pending")) {
          return;
        }
        this.#seen.delete(id);
        this.#seen.set(id, approval.state);
        if (this.#seen.size > SEEN_MAX) this.#seen.delete(this.#seen.keys().next().value!);
        const type = approval.state === "pending"
          ? "added"
          : approval.state === "expired" || approval.state === "withdrawn"
          ? approval.state
          : "decided";
        this.#listeners.emit({ type, approval });
      }).catch((err) => log(`approvals: a change could not be read (${codeOf(err)})`)),
    );
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** An error's code for the log: never its message, which could quote a value. */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Za-z0-9_]{1,40}$/.test(code) ? code : "error";
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
