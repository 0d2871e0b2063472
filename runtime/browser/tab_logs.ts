/**
 * The per-tab records of the session's logs (the page log, the network log), kept by
 * recency: a write moves its tab to the end, and a write to a new tab past the bound
 * forgets the least recently written one first, so a page opening tab after tab cannot
 * grow the runtime's memory. One implementation for both logs.
 *
 * @module
 */

/** How a {@link TabLogs} makes, bounds and forgets its records. */
export interface TabLogsOptions<T> {
  /** Tabs with a record; the least recently written one goes first. */
  max: number;
  /** A new tab's empty record. */
  create: () => T;
  /** Hears of each record forgotten (evicted, or its tab closed). */
  onForget?: (record: T) => void;
}

/** One record per tab, by recency of writes. */
export class TabLogs<T> {
  readonly #options: TabLogsOptions<T>;
  /** Insertion order is recency: a write moves its tab to the end. */
  readonly #tabs = new Map<string, T>();

  constructor(options: TabLogsOptions<T>) {
    this.#options = options;
  }

  /** The record of tab `tabId`, if it has one; reading does not make it recent. */
  get(tabId: string): T | undefined {
    return this.#tabs.get(tabId);
  }

  /** The record of tab `tabId` for a write: made if new, and now the most recent. */
  write(tabId: string): T {
    let record = this.#tabs.get(tabId);
    if (record !== undefined) {
      this.#tabs.delete(tabId);
    } else {
      record = this.#options.create();
      if (this.#tabs.size >= this.#options.max) this.forget(this.#tabs.keys().next().value!);
    }
    this.#tabs.set(tabId, record);
    return record;
  }

  /** Drops tab `tabId`'s record (a closed tab). */
  forget(tabId: string): void {
    const record = this.#tabs.get(tabId);
    if (record === undefined) return;
    this.#tabs.delete(tabId);
    this.#options.onForget?.(record);
  }
}
