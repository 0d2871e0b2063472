/**
 * What a runtime does with a shared board (approvals, questions) besides posting: waits for
 * a record to leave `pending` until its deadline or its call's end (an outage waited out,
 * never taken for an answer), tells a live view of every change any runtime made (read back,
 * each move announced once), and at its stop withdraws its waiting calls and waits for the
 * work under way.
 *
 * @module
 */
import { errorCode } from "../errors.ts";
import { log } from "../log.ts";
import type { BoardRecord } from "./board_signals.ts";

/** Why a wait stopped before the board answered. */
export type Ended = "timeout" | "withdrawn";

/** What a board gives its client. */
export interface Board<R extends BoardRecord> {
  settled(id: string, signal?: AbortSignal): Promise<R>;
  get(id: string): Promise<R | undefined>;
  onChange(listener: (id: string) => void): () => void;
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
