/**
 * Reads the request guard let through, waiting for the egress proxy: a GET or HEAD that
 * `Fetch` paused and the policy allowed with its page facts (and that was audited then) is
 * let through by the proxy once on that verdict, instead of being judged and audited a
 * second time. Only an exact method and full URL match takes a ticket, and each is taken
 * once; a write, an upgrade, or a request no ticket names is judged by the proxy as ever.
 * Full URLs are held in memory only, for at most `ttlMs`.
 *
 * @module
 */

interface Ticket {
  count: number;
  at: number;
}

/** Methods a ticket may carry: reads only (a write is judged by both layers). */
const READS = new Set(["GET", "HEAD"]);

/** One session's tickets. */
export class GuardTickets {
  readonly #tickets = new Map<string, Ticket>();
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(max = 4096, ttlMs = 30_000, now = () => performance.now()) {
    this.#max = max;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** Notes that the guard allowed `method` `url`; writes get no ticket. */
  issue(method: string, url: string): void {
    const key = ticketKey(method, url);
    if (key === undefined) return;
    const t = this.#tickets.get(key);
    this.#tickets.delete(key);
    this.#tickets.set(key, { count: (t?.count ?? 0) + 1, at: this.#now() });
    while (this.#tickets.size > this.#max) this.#tickets.delete(this.#tickets.keys().next().value!);
  }

  /** Takes a ticket for `method` `url` if the guard allowed it lately. */
  take(method: string, url: string): boolean {
    const key = ticketKey(method, url);
    const t = key === undefined ? undefined : this.#tickets.get(key);
    if (!t || key === undefined) return false;
    if (this.#now() - t.at > this.#ttlMs) {
      this.#tickets.delete(key);
      return false;
    }
    if (--t.count === 0) this.#tickets.delete(key);
    return true;
  }
}

function ticketKey(method: string, url: string): string | undefined {
  const m = method.toUpperCase();
  if (!READS.has(m)) return undefined;
  try {
    return `${m} ${new URL(url).href}`;
  } catch {
    return undefined;
  }
}
