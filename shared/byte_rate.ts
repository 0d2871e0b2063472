/**
 * A byte-rate meter for what one browser makes the runtime take in (its CDP messages, its
 * held request bodies): a token bucket that says, for every batch of bytes, whether to go on,
 * to wait (the reader stops reading for that long, and the browser's own writes wait), or
 * that the browser has kept over the rate, slowed all along, for longer than it may
 * (`flood`), when its owner ends it.
 *
 * The rule, kept here: the bucket holds up to `burstBytes` and refills at `bytesPerSec`;
 * every batch is taken from it, even past empty (the debt is what the reader waits off). A
 * take that leaves the bucket in debt starts (or continues) a spell over the rate; only a
 * bucket found at least half full when bytes come ends the spell (not merely out of debt: a reader's timer
 * that fires late refills a little, and one late timer must not excuse a browser that never
 * let up). A take in debt when the spell began `floodMs` ago or more is `flood`. So a browser
 * that bursts and then goes quiet is never ended, and one is ended only when, after spending
 * its whole burst, it kept on for `floodMs` at more than `bytesPerSec - burstBytes / (2 *
 * floodMs)` on average (slowed to `bytesPerSec` all along). It is in `shared/` because both sides of the runtime's
 * intake use it: the CDP pipe (`cdp/`, a leaf) and the egress proxy child (`runtime/proxy/`).
 *
 * @module
 */

/** The bounds of one meter. */
export interface ByteRateLimits {
  /** Bytes per second the browser may keep up for as long as it likes. */
  bytesPerSec: number;
  /** Bytes it may send at once above that rate (the bucket's size). */
  burstBytes: number;
  /** How long it may keep over the rate, slowed, before the meter says `flood`. */
  floodMs: number;
}

/** What the reader does with a batch it just took. */
export type Pace =
  /** Read on. */
  | { kind: "go" }
  /** Stop reading this browser's bytes for `ms`, then read on. */
  | { kind: "wait"; ms: number }
  /** Over the rate for `floodMs`: end this browser. */
  | { kind: "flood" };

const GO: Pace = { kind: "go" };
const FLOOD: Pace = { kind: "flood" };

/** One browser's meter of one intake. */
export class ByteRate {
  readonly #limits: ByteRateLimits;
  readonly #now: () => number;
  #tokens: number;
  #at: number;
  /** When the current spell over the rate began; undefined outside one. */
  #overSince: number | undefined;
  #total = 0;

  /** `now` in milliseconds (a test's clock; `performance.now` by default). */
  constructor(limits: ByteRateLimits, now: () => number = () => performance.now()) {
    if (!(limits.bytesPerSec > 0) || !(limits.burstBytes >= 0) || !(limits.floodMs >= 0)) {
      throw new RangeError("a byte rate needs bytesPerSec > 0, burstBytes >= 0, floodMs >= 0");
    }
    this.#limits = { ...limits };
    this.#now = now;
    this.#tokens = limits.burstBytes;
    this.#at = now();
  }

  /** Every byte taken so far (a control counts what a browser made the runtime read). */
  get total(): number {
    return this.#total;
  }

  /** Takes `bytes` just read (or about to be) and says how the reader goes on. */
  take(bytes: number): Pace {
    const now = this.#now();
    const { bytesPerSec, burstBytes, floodMs } = this.#limits;
    // A clock that went back (a test's, never `performance.now`) refills nothing.
    const elapsed = Math.max(0, now - this.#at);
    this.#at = now;
    this.#tokens = Math.min(burstBytes, this.#tokens + elapsed * bytesPerSec / 1000);
    // Quiet long enough to half-fill the bucket since the last take: any spell is over.
    if (this.#tokens >= burstBytes / 2) this.#overSince = undefined;
    this.#tokens -= bytes;
    this.#total += bytes;
    if (this.#tokens >= 0) return GO;
    this.#overSince ??= now;
    if (now - this.#overSince >= floodMs) return FLOOD;
    return { kind: "wait", ms: Math.ceil(-this.#tokens * 1000 / bytesPerSec) };
  }
}
