/**
 * Slows down guessing the admin token: after `max` failed attempts within a minute from one
 * client, every attempt from it (right or wrong) is refused until the oldest failure is a
 * minute old.
 *
 * @module
 */

/** Options of `FailureLimiter`. */
export interface FailureLimiterOptions {
  /** Failures allowed per window; default 5. */
  max?: number;
  /** Default one minute. */
  windowMs?: number;
  now?: () => number;
}

/** Failed attempts per client. */
export class FailureLimiter {
  readonly #max: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #failures = new Map<string, number[]>();

  constructor(options: FailureLimiterOptions = {}) {
    this.#max = options.max ?? 5;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** Seconds until `client` may try again; 0 when it may now. */
  retryAfter(client: string): number {
    const recent = this.#recent(client);
    if (recent.length < this.#max) return 0;
    return Math.max(1, Math.ceil((recent[0] + this.#windowMs - this.#now()) / 1000));
  }

  /** Counts a failed attempt of `client`. */
  fail(client: string): void {
    const recent = this.#recent(client);
    recent.push(this.#now());
    this.#failures.set(client, recent);
    // Clients that stopped trying are forgotten, so the map cannot grow without bound.
    if (this.#failures.size > 1_000) {
      for (const key of [...this.#failures.keys()]) {
        if (this.#recent(key).length === 0) this.#failures.delete(key);
      }
    }
  }

  #recent(client: string): number[] {
    const since = this.#now() - this.#windowMs;
    const recent = (this.#failures.get(client) ?? []).filter((t) => t > since);
    if (recent.length === 0) this.#failures.delete(client);
    else this.#failures.set(client, recent);
    return recent;
  }
}
