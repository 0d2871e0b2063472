/**
 * Coarse deadlines for the proxy's many short waits (every request head, every answer from
 * the runtime): one timer for all of them, ticking while any is armed, instead of a timer
 * armed and cleared per wait, which cost more than the rest of a small request's handling.
 * A deadline fires up to one tick late.
 *
 * @module
 */

interface Wait {
  at: number;
  fire: () => void;
}

/** A set of deadlines sharing one timer. */
export class Deadlines {
  readonly #waits = new Map<number, Wait>();
  readonly #tickMs: number;
  readonly #now: () => number;
  #next = 1;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(tickMs = 1_000, now = () => performance.now()) {
    this.#tickMs = tickMs;
    this.#now = now;
  }

  /** Calls `fire` once `ms` have passed, unless cancelled first; returns the wait's id. */
  arm(ms: number, fire: () => void): number {
    const id = this.#next++;
    this.#waits.set(id, { at: this.#now() + ms, fire });
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.tick(), this.#tickMs);
      // A pending wait must not keep the process alive on its own.
      Deno.unrefTimer(Number(this.#timer));
    }
    return id;
  }

  /**
   * Cancels a wait (nothing when it fired already). The timer stays until a tick finds
   * nothing armed: requests come and go faster than it ticks.
   */
  cancel(id: number): void {
    this.#waits.delete(id);
  }

  /** How many waits are armed (for tests). */
  get size(): number {
    return this.#waits.size;
  }

  /** Fires every wait that is due (the timer calls it; tests may too). */
  tick(): void {
    const now = this.#now();
    for (const [id, w] of this.#waits) {
      if (w.at > now) continue;
      this.#waits.delete(id);
      try {
        w.fire();
      } catch { /* one wait's failure is not the others' */ }
    }
    if (this.#waits.size === 0) this.#stop();
  }

  #stop(): void {
    if (this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
