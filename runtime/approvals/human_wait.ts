/**
 * One wait for a human: settles exactly once, with the first of an answer, a timeout or the
 * caller's abort. Its timer and abort listener are always released, so nothing of a
 * finished wait keeps the process alive.
 *
 * @module
 */

/** The longest delay a timer takes (larger ones fire at once). */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** What a wait does when no answer came in time or its caller went away. */
export interface WaitEnds<T> {
  /** Runs once the time is up; its value settles the wait. */
  timeout(): T;
  /** Runs when the signal aborts; its value settles the wait (a thrown error rejects it). */
  abort(): T;
}

/** A pending answer of type `T`. */
export class HumanWait<T> {
  /** Settles with the answer, the timeout's or the abort's value. */
  readonly promise: Promise<T>;
  #resolve!: (value: T) => void;
  #reject!: (err: unknown) => void;
  #done = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #signal: AbortSignal | undefined;
  #onAbort: (() => void) | undefined;
  readonly #ends: WaitEnds<T>;

  /** Starts waiting `timeoutMs` (not finite or negative: no time at all). */
  constructor(timeoutMs: number, signal: AbortSignal | undefined, ends: WaitEnds<T>) {
    this.promise = new Promise<T>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#ends = ends;
    const delay = Number.isFinite(timeoutMs) ? Math.min(Math.max(0, timeoutMs), MAX_DELAY_MS) : 0;
    this.#timer = setTimeout(() => this.#end(ends.timeout), delay);
    if (signal) {
      this.#signal = signal;
      this.#onAbort = () => this.#end(ends.abort);
      signal.addEventListener("abort", this.#onAbort, { once: true });
    }
  }

  /** True once settled. */
  get done(): boolean {
    return this.#done;
  }

  /** Settles with `value`; false when the wait had already ended. */
  settle(value: T): boolean {
    if (this.#done) return false;
    this.#release();
    this.#resolve(value);
    return true;
  }

  /** Ends the wait as if its signal had aborted (the runtime is stopping). */
  cancel(): void {
    this.#end(this.#ends.abort);
  }

  #end(make: () => T): void {
    if (this.#done) return;
    this.#release();
    try {
      this.#resolve(make());
    } catch (err) {
      this.#reject(err);
    }
  }

  #release(): void {
    this.#done = true;
    clearTimeout(this.#timer);
    if (this.#onAbort) this.#signal?.removeEventListener("abort", this.#onAbort);
  }
}
