/**
 * What a shared board (approvals, questions) does with its notifications: it tells the
 * change listeners (the console's live view) and wakes the calls waiting on that id; a waiting
 * call sleeps until its id's notification or the poll, whichever comes first (a notification
 * can be lost while the listening connection is down). And the wait itself: read the record
 * until it leaves `pending`, ending one whose time ran out and whose poster is gone.
 *
 * @module
 */
import { log } from "../log.ts";

/** A record on a board: its state, and when it runs out. */
export interface BoardRecord {
  readonly state: string;
  readonly expires_at: string;
}

/** The notifications of one board. */
export class BoardSignals {
  readonly #what: string;
  readonly #pollMs: number;
  readonly #waiting = new Map<string, Set<() => void>>();
  readonly #changes = new Set<(id: string) => void>();

  /** `what` names the board in log lines (`approvals`, `questions`). */
  constructor(what: string, pollMs: number) {
    this.#what = what;
    this.#pollMs = pollMs;
  }

  /** A notification named `id`: every change listener hears it, and its waiters wake. */
  notified(id: string): void {
    for (const listener of [...this.#changes]) {
      try {
        listener(id);
      } catch (err) {
        // A broken listener must not stop the waiting calls below from waking.
        log(`${this.#what}: a change listener failed: ${(err as Error)?.name ?? "error"}`);
      }
    }
    const set = this.#waiting.get(id);
    if (!set) return;
    this.#waiting.delete(id);
    for (const wake of set) wake();
  }

  /** Adds a change listener; returns the function that removes it. */
  onChange(listener: (id: string) => void): () => void {
    // A wrapper per call, so adding one function twice needs two removals.
    const entry = (id: string) => listener(id);
    this.#changes.add(entry);
    return () => {
      this.#changes.delete(entry);
    };
  }

  /**
   * Resolves with the record once `read()` finds it no longer pending, woken by `id`'s
   * notification or the poll; one past its time is ended with `expire()` first (its poster
   * gone, nobody would end it). Rejects when `signal` aborts or a read fails.
   */
  async settled<T extends BoardRecord>(
    id: string,
    read: () => Promise<T | undefined>,
    expire: () => Promise<unknown>,
    signal?: AbortSignal,
  ): Promise<T> {
    while (true) {
      signal?.throwIfAborted();
      const now = await read();
      if (!now) throw new Error(`no ${this.#what} record ${id}`);
      if (now.state !== "pending") return now;
      if (Date.parse(now.expires_at) <= Date.now()) {
        await expire();
        continue;
      }
      await this.#sleep(id, signal);
    }
  }

  /** Until `id`'s notification, the poll, or the abort. */
  #sleep(id: string, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", wake);
        const set = this.#waiting.get(id);
        set?.delete(wake);
        if (set?.size === 0) this.#waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, this.#pollMs);
      signal?.addEventListener("abort", wake, { once: true });
      let set = this.#waiting.get(id);
      if (!set) this.#waiting.set(id, set = new Set());
      set.add(wake);
    });
  }
}
