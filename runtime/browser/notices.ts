/**
 * Runtime notices gathered between two tool calls (a new tab, a restarted browser, refused
 * requests); the next result carries them once. A notice can quote the page (the origins
 * of refused requests): each line is stored redacted.
 *
 * @module
 */
import { processRedactor, type Redactor } from "../redact/mod.ts";

/** A queue of notice lines. */
export class Notices {
  #lines: string[] = [];
  readonly #redactor: Redactor;

  /** `redactor` (the process's by default) redacts each line as it is queued. */
  constructor(redactor: Redactor = processRedactor()) {
    this.#redactor = redactor;
  }

  /** Adds a line (redacted). */
  push(line: string): void {
    this.#lines.push(this.#redactor.redact(line));
  }

  /** Drops every queued copy of `line` (a notice made moot by the call itself). */
  drop(line: string): void {
    const shown = this.#redactor.redact(line);
    this.#lines = this.#lines.filter((l) => l !== shown);
  }

  /** Whether `line` is queued. */
  has(line: string): boolean {
    return this.#lines.includes(this.#redactor.redact(line));
  }

  /** Everything queued; clears the queue. */
  take(): string[] {
    const lines = this.#lines;
    this.#lines = [];
    return lines;
  }
}
