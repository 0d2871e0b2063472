/**
 * How many sessions a runtime admits at once (`--max-sessions`): by default what the
 * machine's memory holds, a session's browser and its share of the runtime at 256 MiB each
 * in three quarters of the memory. Beyond it a new session is refused with 503 and
 * `Retry-After` (`SERVER_BUSY`) before any browser starts, instead of every session slowing
 * down together. And how many of them one agent may hold (`agentShare`): past that, that
 * agent alone is refused (`AGENT_BUSY`), the others still get in. Both count this runtime's
 * sessions only, also on a shared store: they keep its memory, and a load balancer sends a
 * refused session to another runtime, where the agent has its share again.
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

/**
 * The sessions one agent may hold at once on a runtime capped at `max` when its policy sets no
 * `max_sessions`: half the cap, rounded up (at least 1). So one agent never takes every
 * session: from a cap of 2 on, another agent always finds a place (at 3 one agent holds at
 * most 2, at 16 at most 8), and one alone still gets half the runtime; an agent that needs
 * more is given it in its policy. At a cap of 1 the one session is whoever's comes first.
 */
export function defaultAgentShare(max: number): number {
  return Math.max(1, Math.ceil(max / 2));
}

/**
 * Sessions an agent whose policy says `maxSessions` (its `max_sessions`) may hold on a runtime
 * capped at `max`: that number; 0 there: none of its own, only the runtime's cap; unset: the
 * default share of the cap (none without a cap).
 */
export function agentShare(
  maxSessions: number | undefined,
  max: number | undefined,
): number | undefined {
  if (maxSessions !== undefined) return maxSessions === 0 ? undefined : maxSessions;
  return max === undefined ? undefined : defaultAgentShare(max);
}
