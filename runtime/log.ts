/**
 * Runtime logging. Everything goes to stderr: in stdio mode stdout carries only MCP.
 * Callers pass codes and counts, never page text, arguments or secret values; every line
 * still passes through the filters `addLogFilter()` installed (the process redactor of
 * `runtime/redact/` installs itself when it is loaded), in case one does.
 *
 * @module
 */

let filter: (line: string) => string = (line) => line;

/**
 * Adds a filter every later log line passes through, after the ones already there. Filters
 * are only ever added: nothing can take the redactor out of the log again.
 */
export function addLogFilter(next: (line: string) => string): void {
  const previous = filter;
  filter = (line) => next(previous(line));
}

/** Writes one log line to stderr. */
export function log(message: string): void {
  console.error(filter(`omotai: ${message}`));
}
