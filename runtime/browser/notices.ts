/**
 * Runtime notices gathered between two tool calls (a new tab, a restarted browser, blocked
 * requests); the next result carries them once.
 *
 * @module
 */

/** A queue of notice lines. */
export class Notices {
  #lines: string[] = [];

  /** Adds a line. */
  push(line: string): void {
    this.#lines.push(line);
  }

  /** Drops every queued copy of `line` (a notice made moot by the call itself). */
  drop(line: string): void {
    this.#lines = this.#lines.filter((l) => l !== line);
  }

  /** Everything queued; clears the queue. */
  take(): string[] {
    const lines = this.#lines;
    this.#lines = [];
    return lines;
  }
}
