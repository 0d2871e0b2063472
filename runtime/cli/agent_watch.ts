/**
 * Ends the live sessions of agents whose key was removed, whoever removed it (the console,
 * the API, or `omotai agent rm` in another process).
 *
 * @module
 */
import type { AgentKeys } from "../agents/agent_keys.ts";
import { log } from "../log.ts";

/** Watches `agents`; returns the timer (cleared at shutdown). */
export function watchRemovedAgents(
  agents: AgentKeys,
  close: (name: string, createdAt: string) => Promise<number>,
): ReturnType<typeof setInterval> {
  let generation = agents.generation();
  let known = agents.list();
  const timer = setInterval(() => {
    try {
      const g = agents.generation();
      if (g === generation) return;
      generation = g;
      const now = agents.list();
      for (const a of known) {
        if (!now.some((b) => b.name === a.name && b.createdAt === a.createdAt)) {
          close(a.name, a.createdAt).then((n) =>
            n && log(`closed ${n} session(s) of a removed agent`)
          );
        }
      }
      known = now;
    } catch {
      // An unreadable table: verify() already refuses every key.
    }
  }, 1_000);
  Deno.unrefTimer(timer);
  return timer;
}
