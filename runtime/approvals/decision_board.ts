/**
 * The one board of human decisions (approvals, questions, login push challenges), over a
 * `DecisionStore` (in memory for one runtime, PostgreSQL for every runtime of a tenant). Its
 * state machine, kept here once for every kind and every store:
 *
 *   pending -> a human's outcome (approved / denied / answered), by `decide`, while in time
 *   pending -> expired    (the poster's deadline; fail closed: an expiry is never a yes)
 *   pending -> withdrawn  (the waiting call went away, or the runtime stopped)
 *   approved / answered -> unrun (denied / withdrawn): the outcome never reached its call
 *
 * `run` is the one settle(): it posts a call's record and sees it to its end. Exactly one
 * outcome wins, by the store's conditional update (a human's on one runtime, another's on a
 * second, the poster's timeout and its caller's abort all race there). The WAITING runtime
 * alone writes the outcome's audit row, once, before its call returns; an outcome the call
 * would act on whose row cannot be written is recorded as unrun and not acted on.
 *
 * Fail closed: a post the store refuses is `unposted` (the caller refuses in its own words);
 * a store that fails while the call waits is waited out until the deadline, and one that
 * cannot say at the deadline is `expired`, never an answer nobody gave.
 *
 * @module
 */
import {
  type AuditEvent,
  bounded,
  type DecisionKind,
  type DecisionRecord,
  type DecisionStore,
  type HumanOutcome,
  type SettleResult,
} from "../store/mod.ts";
import { errorCode, log } from "../mod.ts";

/** Where the outcome's audit row goes (`SqliteAuditLog`, `PgAuditLog`). */
export interface BoardAudit {
  /** Resolves once the row is stored; rejects when it cannot be. */
  appendSoon(event: AuditEvent): Promise<unknown>;
}

/** Options of a board. */
export interface DecisionBoardOptions {
  /**
   * The clock of the records' `created_at` and `expires_at` (tests); default `Date.now`. The
   * store's own checks of `expires_at` use its clock.
   */
  now?: () => number;
  /** How often a waiting call looks, in case a notification was lost; default 500 ms. */
  pollMs?: number;
  /** Past the deadline, how long each ask of the store may take; default `DEADLINE_GRACE_MS`. */
  graceMs?: number;
}

/**
 * What a kind tells the board: its noun, the audit row of each of its outcomes, and how the
 * console names its finished records and hears its changes.
 */
export interface DecisionKindRules<K extends DecisionKind, E, F extends string> {
  /** One record in log lines (`an approval`, `a question`). */
  noun: string;
  /** What the console calls the finished records (`decided`, `answered`). */
  finished: F;
  /** The live view's event of `record`, which just moved. */
  event(record: DecisionRecord<K>): E;
  /** The state a call acts on (`approved`, `answered`): undone when its row is not kept. */
  acted: FinalState<K>;
  /** The audit row of `record` ending as `state` (`final`: as read back from the store). */
  row(record: DecisionRecord<K>, state: FinalState<K>, final?: DecisionRecord<K>): AuditEvent;
}

/** A state a record of kind `K` ends in. */
export type FinalState<K extends DecisionKind> = Exclude<DecisionRecord<K>["state"], "pending">;

/**
 * How a call's record ended (`run`): never posted, or its final state (with the record when
 * read back from the store) and whether its audit row was written.
 */
export type Settled<K extends DecisionKind> =
  | { kind: "unposted" }
  | { kind: "final"; state: FinalState<K>; record?: DecisionRecord<K>; written: boolean };

/** How a wait stopped before the store answered. */
type Ended = "timeout" | "withdrawn";

/**
 * Past a record's deadline, how long each ask of the store may take before the call is ended
 * as expired (fail closed: a slow database is a deny, never a hang).
 */
export const DEADLINE_GRACE_MS = 3_000;

/** How often a waiting call looks, in case a notification was lost (default). */
export const BOARD_POLL_MS = 500;

/** The longest delay a timer takes (larger ones fire at once). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The most ids whose last announced state is remembered. */
const SEEN_MAX = 1_000;

/** How long a wait of `timeoutMs` lasts: not finite or negative is no time at all. */
export function waitMs(timeoutMs: number): number {
  return Number.isFinite(timeoutMs) ? Math.min(Math.max(0, timeoutMs), MAX_DELAY_MS) : 0;
}

/**
 * One runtime's board of one kind: its calls' waits, and the console's view of the store. A
 * kind (`ApprovalBoard`, `QuestionBoard`) extends it with its call and its human's outcome.
 */
export class DecisionBoard<K extends DecisionKind, E, F extends string> {
  readonly #store: DecisionStore<K>;
  readonly #audit: BoardAudit;
  readonly #rules: DecisionKindRules<K, E, F>;
  readonly #pollMs: number;
  readonly #graceMs: number;
  /** The records' clock. */
  protected readonly now: () => number;
  /** Calls waiting on an id's notification. */
  readonly #waiting = new Map<string, Set<() => void>>();
  /** The console's live views: told each record whose state moved. */
  readonly #views = new Set<(event: E) => void>();
  #offStore: (() => void) | undefined;
  /** The last state announced, per id (insertion order: oldest first). */
  readonly #seen = new Map<string, string>();
  /** This runtime's waiting calls: what `close()` withdraws. */
  readonly #waits = new Set<(why: Ended) => void>();
  /** Work still running (calls, the live view's reads): what `close()` waits for. */
  readonly #running = new Set<Promise<unknown>>();
  #closed = false;

  /** `audit` receives one row per outcome of this runtime's calls. */
  constructor(
    store: DecisionStore<K>,
    audit: BoardAudit,
    rules: DecisionKindRules<K, E, F>,
    options: DecisionBoardOptions = {},
  ) {
    this.#store = store;
    this.#audit = audit;
    this.#rules = rules;
    this.#pollMs = options.pollMs ?? BOARD_POLL_MS;
    this.#graceMs = options.graceMs ?? DEADLINE_GRACE_MS;
    this.now = options.now ?? Date.now;
    this.#offStore = store.listen((id) => this.#notified(id));
  }

  /** True once `close()` was called. */
  protected get closed(): boolean {
    return this.#closed;
  }

  /**
   * The records of every runtime, newest first: the pending ones, the finished ones, or both
   * (pending first). Rejects with `DB_UNAVAILABLE` when the store cannot be reached.
   */
  async list(state?: "pending" | F): Promise<DecisionRecord<K>[]> {
    const pending = state && state !== "pending"
      ? []
      : (await this.#store.list("pending")).reverse();
    const finished = state === "pending" ? [] : await this.#store.list("finished");
    return [...pending, ...finished];
  }

  /**
   * Hears every record whose state moved, on any runtime (each move once; the first hearer
   * starts the reads, so a console nobody watches costs none). A notification lost while the
   * store was unreachable is not replayed: the console's list is the truth. Returns the
   * function that stops this one.
   */
  subscribe(listener: (event: E) => void): () => void {
    // A wrapper per call, so subscribing one function twice needs two unsubscribes.
    const entry = (event: E) => listener(event);
    this.#views.add(entry);
    return () => {
      this.#views.delete(entry);
    };
  }

  /**
   * The one settle(): posts `record` (pending), waits for it to leave `pending` until
   * `delayMs` (counted from before the post) runs out or the call goes away (`signal`, the
   * runtime closing), ends it and writes its audit row.
   *
   * A call already gone is never posted: `withdrawn`. A post the store refuses is `unposted`
   * (should the insert have landed after all, it runs out: nobody waits on it), and no row is
   * written. A call gone while waiting is withdrawn on the store, whatever won just before:
   * the store's record says what the human did, the caller's audit what became of the call.
   * At the deadline the record is expired, unless another end got there first, which is then
   * honoured; a store that cannot say in time is `expired`: fail closed.
   */
  protected run(
    record: DecisionRecord<K>,
    delayMs: number,
    signal?: AbortSignal,
  ): Promise<Settled<K>> {
    return this.#track(this.#run(record, delayMs, signal));
  }

  /**
   * A human's outcome of record `id`, whichever runtime posted it: `ok` when it won (the
   * waiting runtime then answers its call), `not_pending` when it had already ended or its time
   * ran out (the API answers 409), `unknown` when there is none (404). Rejects with
   * `DB_UNAVAILABLE` when the store cannot be reached.
   */
  protected async outcome(id: string, outcome: HumanOutcome<K>): Promise<SettleResult> {
    return await this.#store.decide(id, outcome);
  }

  /**
   * The runtime is stopping: withdraws every waiting call (each writes its row), stops
   * hearing the store and resolves once the work under way is done; later calls are refused.
   * The store stays open.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const withdraw of [...this.#waits]) withdraw("withdrawn");
    this.#offStore?.();
    this.#offStore = undefined;
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  async #run(
    record: DecisionRecord<K>,
    delayMs: number,
    signal?: AbortSignal,
  ): Promise<Settled<K>> {
    const end = await this.#settle(record, delayMs, signal);
    if (end.kind === "unposted") return end;
    const written = await this.#write(this.#rules.row(record, end.state, end.record));
    if (!written && end.state === this.#rules.acted) {
      // The store says done; nothing acts on it: it is told so (best effort: the store may be
      // what failed).
      await this.#store.unrun(record.id).catch((err) =>
        log(`decisions: ${this.#rules.noun} unrun could not be recorded (${codeOf(err)})`)
      );
    }
    return { ...end, written };
  }

  async #settle(
    record: DecisionRecord<K>,
    delayMs: number,
    signal?: AbortSignal,
  ): Promise<{ kind: "unposted" } | Final<K>> {
    const noun = this.#rules.noun;
    if (signal?.aborted || this.#closed) return { kind: "final", state: withdrawn<K>() };
    const started = performance.now();
    try {
      await this.#store.post(record);
    } catch (err) {
      log(`decisions: ${noun} could not be posted (${codeOf(err)})`);
      return { kind: "unposted" };
    }
    const waited = await this.#wait(
      record.id,
      Math.max(0, delayMs - (performance.now() - started)),
      signal,
    );
    if (waited === "withdrawn") {
      await this.#store.end(record.id, "withdrawn").catch((err) =>
        log(`decisions: ${noun} could not be withdrawn (${codeOf(err)})`)
      );
      return { kind: "final", state: withdrawn<K>() };
    }
    const settled = waited === "timeout" ? undefined : finalOf(waited);
    if (settled) return settled;
    // Time is up here: expire it, unless another end got there first, which is then honoured.
    const ask = <T>(work: Promise<T>) => bounded(work, this.#graceMs);
    try {
      if (await ask(this.#store.end(record.id, "expired"))) {
        return { kind: "final", state: expired<K>() };
      }
      const final = finalOf(await ask(this.#store.get(record.id)));
      if (final) return final;
    } catch (err) {
      log(`decisions: the store could not be reached at the deadline (${codeOf(err)})`);
    }
    // What the store holds could not be read: nothing heard is taken for an answer.
    return { kind: "final", state: expired<K>() };
  }

  /** `event` written; false (logged by code) when it could not be. */
  async #write(event: AuditEvent): Promise<boolean> {
    try {
      await this.#audit.appendSoon(event);
      return true;
    } catch (err) {
      log(`decisions: audit row not written (${codeOf(err)})`);
      return false;
    }
  }

  /**
   * Waits for record `id` to leave `pending`, until `delay` runs out or the call goes away
   * (`signal`, or the runtime closing). A store failure while waiting is waited out: the store
   * is asked again until the deadline.
   */
  async #wait(id: string, delay: number, signal?: AbortSignal): Promise<DecisionRecord<K> | Ended> {
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
          const final = await this.#settled(id, stop.signal);
          // The call went away while the store answered: it is withdrawn all the same.
          return ended === "withdrawn" ? ended : final;
        } catch (err) {
          if (stop.signal.aborted) break;
          // Once per wait: an outage would otherwise log a line per poll for every call.
          if (!failed) log(`decisions: waiting failed (${codeOf(err)}); waiting on`);
          failed = true;
          await this.#sleep(undefined, stop.signal);
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
   * Resolves with record `id` once the store has it no longer pending, woken by its
   * notification or the poll; one past its time is ended first (its poster gone, nobody else
   * would end it). Rejects when `signal` aborts or a read fails.
   */
  async #settled(id: string, signal: AbortSignal): Promise<DecisionRecord<K>> {
    while (true) {
      signal.throwIfAborted();
      const now = await this.#store.get(id);
      if (!now) throw new Error(`no ${this.#rules.noun} record ${id}`);
      if (now.state !== "pending") return now;
      if (Date.parse(now.expires_at) <= Date.now()) {
        await this.#store.end(id, "expired");
        continue;
      }
      await this.#sleep(id, signal);
    }
  }

  /** Until `id`'s notification (none: no id), the poll, or the abort. */
  #sleep(id: string | undefined, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", wake);
        const set = id === undefined ? undefined : this.#waiting.get(id);
        set?.delete(wake);
        if (id !== undefined && set?.size === 0) this.#waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, this.#pollMs);
      signal.addEventListener("abort", wake, { once: true });
      if (id === undefined) return;
      let set = this.#waiting.get(id);
      if (!set) this.#waiting.set(id, set = new Set());
      set.add(wake);
    });
  }

  /** A notification named `id`: its waiters wake, and the live views hear what changed. */
  #notified(id: string): void {
    const set = this.#waiting.get(id);
    this.#waiting.delete(id);
    for (const wake of set ?? []) wake();
    if (this.#views.size > 0) this.#track(this.#changed(id));
  }

  /** Reads `id` back and tells the live views, once per move. */
  async #changed(id: string): Promise<void> {
    let record: DecisionRecord<K> | undefined;
    try {
      record = await this.#store.get(id);
    } catch (err) {
      log(`decisions: a change could not be read (${codeOf(err)})`);
      return;
    }
    // Another tenant's (the channel is shared), or nobody listening any more: nothing to tell.
    if (!record || this.#views.size === 0) return;
    const before = this.#seen.get(id);
    // Reads may come back out of order; a state never moves back to pending, so only a first
    // sight or a move to another final state is news (pending to decided, or an outcome that
    // never reached its call, approved to denied).
    if (before !== undefined && (record.state === before || record.state === "pending")) return;
    this.#seen.delete(id);
    this.#seen.set(id, record.state);
    if (this.#seen.size > SEEN_MAX) this.#seen.delete(this.#seen.keys().next().value!);
    for (const view of [...this.#views]) {
      try {
        view(this.#rules.event(structuredClone(record)));
      } catch (err) {
        // A broken browser tab must not stop the others, nor any call from resolving.
        log(`decisions: a listener failed: ${(err as Error)?.name ?? "error"}`);
      }
    }
  }

  /** Keeps `work` for `close()` to wait on; returns it. */
  #track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const done = () => this.#running.delete(work);
    work.then(done, done);
    return work;
  }
}

/** A final state, as `#settle` sees it before the row. */
type Final<K extends DecisionKind> = {
  kind: "final";
  state: FinalState<K>;
  record?: DecisionRecord<K>;
};

function withdrawn<K extends DecisionKind>(): FinalState<K> {
  return "withdrawn" as FinalState<K>;
}

function expired<K extends DecisionKind>(): FinalState<K> {
  return "expired" as FinalState<K>;
}

/** `record` as it ended, or undefined while it is pending (or missing). */
function finalOf<K extends DecisionKind>(
  record: DecisionRecord<K> | undefined,
): Final<K> | undefined {
  if (!record || record.state === "pending") return undefined;
  return { kind: "final", state: record.state as FinalState<K>, record };
}

/** An error's code for the log: never its message, which could quote a value. */
function codeOf(err: unknown): string {
  return errorCode(err) ?? "error";
}
