/**
 * What a runtime does with a shared board (approvals, questions): posts a call's record and
 * sees it to its end (`settle`: the one protocol of both boards), waits for a record to leave
 * `pending` until its deadline or its call's end (an outage waited out, never taken for an
 * answer), tells a live view of every change any runtime made (read back, each move announced
 * once), and at its stop withdraws its waiting calls and waits for the work under way.
 *
 * @module
 */
import { errorCode } from "../errors.ts";
import { log } from "../log.ts";
import { bounded } from "../store/bounded.ts";
import type { BoardRecord } from "./board_signals.ts";

/** Why a wait stopped before the board answered. */
export type Ended = "timeout" | "withdrawn";

/** What a board gives its client. */
export interface Board<R extends BoardRecord> {
  /** Adds pending `record`; rejects when it could not be stored. */
  post(record: R): Promise<void>;
  /** Ends pending `id` as `state`; true when that won over any other end. */
  finish(id: string, state: "expired" | "withdrawn"): Promise<boolean>;
  settled(id: string, signal?: AbortSignal): Promise<R>;
  get(id: string): Promise<R | undefined>;
  onChange(listener: (id: string) => void): () => void;
}

/** A state a record of type `R` ends in. */
export type FinalState<R extends BoardRecord> =
  | Exclude<R["state"], "pending">
  | "expired"
  | "withdrawn";

/**
 * How a call's record ended (`settle`): never posted (the caller refuses in its own words),
 * or its final state, with the record when that state was read back from the board.
 */
export type Settled<R extends BoardRecord> =
  | { kind: "unposted" }
  | { kind: "final"; state: FinalState<R>; record?: R };

/**
 * Past a record's deadline, how long each ask of the board may take before the call is ended
 * as expired (fail closed: a slow database is a deny, never a hang).
 */
export const DEADLINE_GRACE_MS = 3_000;

/** How `settle` names, and bounds, one board's records. */
export interface SettleOptions {
  /** One record in log lines (`an approval`, `a question`). */
  noun: string;
  /** Past the deadline, how long each ask of the board may take (default `DEADLINE_GRACE_MS`). */
  graceMs?: number;
}

/** The most ids whose last announced state is remembered. */
const SEEN_MAX = 1_000;

/** One runtime's waits on, and view of, one board. */
export class BoardClient<R extends BoardRecord> {
  readonly #what: string;
  readonly #board: Board<R>;
  readonly #pollMs: number;
  /** The live view: told each record whose state moved. */
  readonly #onRecord: (record: R) => void;
  #listening = 0;
  #offChange: (() => void) | undefined;
  /** The last state announced, per id (insertion order: oldest first). */
  readonly #seen = new Map<string, string>();
  /** This runtime's waiting calls: what `close()` withdraws. */
  readonly #waits = new Set<(why: Ended) => void>();
  /** Work still running (calls, the live view's reads): what `close()` waits for. */
  readonly #running = new Set<Promise<unknown>>();
  #closed = false;

  /** `what` names the board in log lines; `onRecord` is told every change while heard. */
  constructor(what: string, board: Board<R>, pollMs: number, onRecord: (record: R) => void) {
    this.#what = what;
    this.#board = board;
    this.#pollMs = pollMs;
    this.#onRecord = onRecord;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Keeps `work` for `close()` to wait on; returns it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.#running.add(work);
    const done = () => this.#running.delete(work);
    work.then(done, done);
    return work;
  }

  /**
   * Starts hearing the board's changes (the first hearer asks the board; none: no reads for
   * a console nobody watches); returns the function that stops this one.
   */
  hear(): () => void {
    if (this.#listening++ === 0 && !this.#closed) {
      this.#offChange = this.#board.onChange((id) => this.#changed(id));
    }
    let on = true;
    return () => {
      if (!on) return;
      on = false;
      if (--this.#listening === 0) this.#stopHearing();
    };
  }

  /**
   * Posts `record`, waits for it to leave `pending` until `delayMs` (counted from before the
   * post) runs out or the call goes away (`signal`, the runtime closing), and ends it. One
   * protocol for both boards (approvals, questions), kept here so the two cannot drift apart;
   * each caller maps the result to its own answer and audit row.
   *
   * A call already gone is never posted: `withdrawn`. A post the board refuses is `unposted`
   * (should the insert have landed after all, it runs out: nobody waits on it). A call gone
   * while waiting is withdrawn on the board, whatever won just before: the board's row says
   * what the operator did, the caller's audit what became of the call. At the deadline the
   * record is expired, unless another end got there first, which is then honoured; a board
   * that cannot say (each ask bounded by `how.graceMs` when set) is `expired`: fail closed.
   */
  async settle(
    record: R & { readonly id: string },
    delayMs: number,
    how: SettleOptions,
    signal?: AbortSignal,
  ): Promise<Settled<R>> {
    if (signal?.aborted) return { kind: "final", state: "withdrawn" };
    const started = performance.now();
    try {
      await this.#board.post(record);
    } catch (err) {
      log(`${this.#what}: ${how.noun} could not be posted (${codeOf(err)})`);
      return { kind: "unposted" };
    }
    const waited = await this.wait(
      record.id,
      Math.max(0, delayMs - (performance.now() - started)),
      signal,
    );
    if (waited === "withdrawn") {
      await this.#board.finish(record.id, "withdrawn").catch((err) =>
        log(`${this.#what}: ${how.noun} could not be withdrawn (${codeOf(err)})`)
      );
      return { kind: "final", state: "withdrawn" };
    }
    const settled = waited === "timeout" ? undefined : finalOf(waited);
    if (settled) return settled;
    // Time is up here: expire it, unless another end got there first, which is then honoured.
    const ask = <T>(work: Promise<T>) => bounded(work, how.graceMs ?? DEADLINE_GRACE_MS);
    try {
      if (await ask(this.#board.finish(record.id, "expired"))) {
        return { kind: "final", state: "expired" };
      }
      const final = finalOf(await ask(this.#board.get(record.id)));
      if (final) return final;
    } catch (err) {
      log(`${this.#what}: the board could not be reached at the deadline (${codeOf(err)})`);
    }
    // What the board holds could not be read: nothing heard is taken for an answer.
    return { kind: "final", state: "expired" };
  }

  /**
   * Waits for record `id` to leave `pending` on the board, until `delay` runs out or the call
   * goes away (`signal`, or the runtime closing). A database failure while waiting is waited
   * out: the board is asked again until the deadline.
   */
  async wait(id: string, delay: number, signal?: AbortSignal): Promise<R | Ended> {
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
          if (!failed) log(`${this.#what}: waiting failed (${codeOf(err)}); waiting on`);
          failed = true;
          await pause(this.#pollMs, stop.signal);
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
   * The runtime is stopping: withdraws every waiting call, stops hearing the board, and
   * resolves once the work under way is done. The board stays open.
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

  /** A notification named `id`: read it back and tell the live view what changed. */
  #changed(id: string): void {
    this.track(
      this.#board.get(id).then((record) => {
        // Another tenant's (the channel is shared), or gone from view: nothing to tell.
        if (!record || this.#offChange === undefined) return;
        const before = this.#seen.get(id);
        // Reads may come back out of order; a state never moves back to pending, so only a
        // first sight or a move to another final state is news (pending to decided, or an
        // approval whose call did not run, approved to denied).
        if (before !== undefined && (record.state === before || record.state === "pending")) {
          return;
        }
        this.#seen.delete(id);
        this.#seen.set(id, record.state);
        if (this.#seen.size > SEEN_MAX) this.#seen.delete(this.#seen.keys().next().value!);
        this.#onRecord(record);
      }).catch((err) => log(`${this.#what}: a change could not be read (${codeOf(err)})`)),
    );
  }
}

/** `record` as it ended, or undefined while it is pending (or missing). */
function finalOf<R extends BoardRecord>(record: R | undefined): Settled<R> | undefined {
  if (!record || record.state === "pending") return undefined;
  return { kind: "final", state: record.state as Exclude<R["state"], "pending">, record };
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
export function codeOf(err: unknown): string {
  return errorCode(err) ?? "error";
}
