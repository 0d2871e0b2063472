/**
 * Telling a blocked page from a starved one. A tab that does not answer while no renderer
 * spends the CPU is either waiting its turn on a busy machine or blocked: its main thread
 * sleeps on something that never comes (a synchronous XHR to a server that never answers,
 * a synchronous call into a browser that will not return). The kernel tells the two apart:
 * a thread that is ready to run but waits for a CPU accumulates run-queue delay (the second
 * field of `/proc/<pid>/schedstat`, the main thread's for a process), a sleeping one does not.
 * A probe sent to a starved renderer wakes its main thread, which then waits on the run queue
 * the whole time the tab is silent; a blocked one never becomes ready.
 *
 * The readings cover the browser's main thread and each renderer's, found on the host through
 * `renderer_pids.ts` (the browser runs in namespaces of its own) and read through the one
 * shell the runtime is granted for the kernel's files.
 *
 * @module
 */
import type { CdpSession } from "../../cdp/mod.ts";
import { runShell } from "../isolation/cgroup_shell.ts";
import { hostPids } from "./renderer_pids.ts";

/** Cumulative run-queue delay (seconds) of the main thread of each process, by host pid. */
export type RunDelays = ReadonlyMap<number, number>;

/** Each pid's line of `/proc/<pid>/schedstat`, prefixed with the pid (a process gone is skipped). */
const READ_SCHEDSTAT =
  `for p in "$@"; do read a b c < "/proc/$p/schedstat" 2>/dev/null && echo "$p $a $b"; done; exit 0`;

/** Parses what {@link READ_SCHEDSTAT} prints: the run-queue delay of each pid, in seconds. */
export function parseSchedstat(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of text.matchAll(/^(\d+) (\d+) (\d+)$/gm)) out.set(Number(m[1]), Number(m[3]) / 1e9);
  return out;
}

/**
 * The run-queue delays of the browser's main thread and its renderers'; undefined when the
 * browser does not say which processes are its own or none can be read (the silence is then
 * judged on the CPU alone).
 */
export async function readRunDelays(
  root: CdpSession,
  rootPid: number | undefined,
  timeoutMs: number,
): Promise<RunDelays | undefined> {
  if (rootPid === undefined) return undefined;
  try {
    const { processInfo } = await root.send("SystemInfo.getProcessInfo", undefined, {
      timeoutMs,
    });
    const self = processInfo.find((p) => p.type === "browser");
    if (!self) return undefined;
    const ids = [self.id, ...processInfo.filter((p) => p.type === "renderer").map((p) => p.id)];
    const pids = [...(await hostPids(rootPid, self.id, ids)).values()];
    if (pids.length === 0) return undefined;
    const delays = parseSchedstat(await runShell(READ_SCHEDSTAT, pids.map(String)));
    return delays.size > 0 ? delays : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The most run-queue delay (seconds) any one main thread gathered between two readings; a
 * process started in between counts from zero, one that ended counts nothing.
 */
export function mostWaited(before: RunDelays, after: RunDelays): number {
  let most = 0;
  for (const [pid, seconds] of after) {
    const waited = seconds - (before.get(pid) ?? 0);
    if (waited > most) most = waited;
  }
  return most;
}
