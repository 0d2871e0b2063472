/**
 * How many sessions a runtime admits at once (`--max-sessions`): by default what the
 * machine's memory holds, a session's browser and its share of the runtime at 256 MiB each
 * in three quarters of the memory. Beyond it a new session is refused with 503 and
 * `Retry-After` (`SERVER_BUSY`) before any browser starts, instead of every session slowing
 * down together.
 *
 * @module
 */

/** Memory a session is counted at: its browser (150–170 MiB at ten) and its runtime share. */
export const SESSION_MEMORY_BYTES = 256 * 1024 * 1024;

/** The cap for a machine with `totalBytes` of memory (at least 1). */
export function defaultMaxSessions(totalBytes: number): number {
  return Math.max(1, Math.floor((totalBytes * 0.75) / SESSION_MEMORY_BYTES));
}

/** This machine's cap; when its memory cannot be read, 16. */
export function machineMaxSessions(): number {
  try {
    return defaultMaxSessions(Deno.systemMemoryInfo().total);
  } catch {
    return 16;
  }
}
