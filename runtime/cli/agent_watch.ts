/**
 * Ends the live sessions of agents whose key was removed, whoever removed it (the console,
 * the API, `omotai agent rm` in another process, or another runtime sharing the database).
 *
 * @module
 */
import type { AgentInfo } from "../store/mod.ts";
import { log } from "../mod.ts";

/** How often the agents are read again (a removal ends its sessions within this). */
export const AGENT_WATCH_MS = 1_000;

/**
 * Every `intervalMs`, reads the agents `list()` answers and closes the sessions of every agent
 * `held()` names that is no longer among them (by name and key's creation: a re-added key is
 * another agent). It compares what is held with what exists at each read, never two reads
 * with each other: an agent added and removed between two reads, with a session opened in
 * between, is found all the same. Returns a function that stops watching.
 */
export function watchRemovedAgents(
  list: () => readonly AgentInfo[] | Promise<readonly AgentInfo[]>,
  held: () => readonly { name: string; createdAt: string }[],
  close: (name: string, createdAt: string) => Promise<number>,
  intervalMs = AGENT_WATCH_MS,
): () => void {
  let busy = false;
  const look = async () => {
    // One read at a time: a slow database does not pile reads up.
    if (busy) return;
    busy = true;
    try {
      const now = await list();
      for (const a of held()) {
        if (!now.some((b) => b.name === a.name && b.createdAt === a.createdAt)) {
          const n = await close(a.name, a.createdAt);
          if (n) log(`closed ${n} session(s) of a removed agent`);
        }
      }
    } catch {
      // Unreadable keys: every key is refused already (the guard answers 503); the next read
      // that succeeds finds what is held then.
    } finally {
      busy = false;
    }
  };
  void look();
  const timer = setInterval(look, intervalMs);
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}
