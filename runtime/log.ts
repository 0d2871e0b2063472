/**
 * Runtime logging. Everything goes to stderr: in stdio mode stdout carries only MCP.
 * Callers pass codes and counts, never page text, arguments or secret values.
 *
 * @module
 */

/** Writes one log line to stderr. */
export function log(message: string): void {
  console.error(`omotai: ${message}`);
}
