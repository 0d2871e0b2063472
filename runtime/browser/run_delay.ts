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
import { runShell } from "../isolation/mod.ts";
import { hostPids } from "./renderer_pids.ts";

/** Cumulative run-queue delay (seconds) of the main thread of each process, by host pid. */
export type RunDelays = ReadonlyMap<number, number>;

/**
 * Each pid's line of `/proc/<pid>/schedstat`, prefixed with the pid and followed by its state
 * letter from `/proc/<pid>/status` (a process gone is skipped).
 */
const READ_SCHEDSTAT = [
  `for p in "$@"; do`,
  `  read a b c < "/proc/$p/schedstat" 2>/dev/null || continue`,
  `  s=$(sed -n 's/^State:[[:space:]]*\\(.\\).*/\\1/p' "/proc/$p/status" 2>/dev/null)`,
  `  echo "$p $a $b $s"`,
  `done`,
  `exit 0`,
].join("\n");

/** What {@link READ_SCHEDSTAT} prints for `pids` (host pids). */
export function readSchedstat(pids: readonly number[]): Promise<string> {
  return runShell(READ_SCHEDSTAT, pids.map(String));
}

/** Parses what {@link READ_SCHEDSTAT} prints: the run-queue delay of each pid, in seconds. */
export function parseSchedstat(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const m of text.matchAll(/^(\d+) (\d+) (\d+)(?: \S*)?$/gm)) {
    out.set(Number(m[1]), Number(m[3]) / 1e9);
  }
  return out;
}

/**
 * Whether a process of what {@link READ_SCHEDSTAT} read is stopped (state `T` or `t`: a
 * signal, a debugger, a freezer). A stopped thread neither runs nor waits on the run queue,
 * so it looks blocked while it is held by the machine: the kernel cannot tell the two apart.
 */
export function anyStopped(text: string): boolean {
  return /^\d+ \d+ \d+ [Tt]$/m.test(text);
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
    const text = await readSchedstat(pids);
    // Stopped processes are not judged by the run queue: the silence is judged on the CPU.
    if (anyStopped(text)) return undefined;
    const delays = parseSchedstat(text);
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
