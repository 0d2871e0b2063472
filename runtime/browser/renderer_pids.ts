/**
 * A renderer's process on the host, to end it when its browser cannot. Chromium reports its
 * processes' pids (`SystemInfo.getProcessInfo`) as its own pid namespace sees them, and a
 * sandboxed browser runs in a namespace of its own (bubblewrap's; its renderers in a further
 * one, Chromium's zygote's). The host pid is found in `/proc/<pid>/status`, whose `NSpid:`
 * line lists a process's pid in each namespace it is in, outermost first: among the
 * processes below the one the runtime started, the browser is the one whose innermost pid
 * is what it reports for itself, and the level of that pid is the browser's namespace; a
 * renderer is the process whose pid at that level is what the browser reports for it.
 *
 * Both the reading and the signal go through the one shell the runtime is granted for the
 * kernel's files (`runtime/isolation/cgroup_shell.ts`): Deno asks for `--allow-all` before it
 * reads anything under `/proc/<pid>`, and its own `Deno.kill` needs unscoped `--allow-run`.
 *
 * @module
 */
import { runShell } from "../isolation/mod.ts";

/** One process's parent and its pids by namespace level (outermost first). */
interface ProcEntry {
  pid: number;
  ppid: number;
  nspid: number[];
}

/** Parses `PPid:` and `NSpid:` of a `/proc/<pid>/status`; undefined when either is missing. */
export function parseStatus(
  pid: number,
  status: string,
): ProcEntry | undefined {
  const ppid = /^PPid:\s*(\d+)/m.exec(status)?.[1];
  const nspid = /^NSpid:\s*([\d\s]+)$/m.exec(status)?.[1];
  if (ppid === undefined) return undefined;
  // A kernel without NSpid (before 4.1) shows one namespace: the host's.
  const levels = nspid ? nspid.trim().split(/\s+/).map(Number) : [pid];
  return { pid, ppid: Number(ppid), nspid: levels };
}

/**
 * Every process's `PPid:` and `NSpid:` lines as `/proc/<pid>/status:<line>`: one grep over
 * them all (a process gone meanwhile is skipped), the script fixed, nothing of a page's in it.
 */
const READ_PROCS = `grep -H -E '^(PPid|NSpid):' /proc/[0-9]*/status 2>/dev/null; exit 0`;

/** Parses what {@link READ_PROCS} prints. */
export function parseProcs(text: string): ProcEntry[] {
  const lines = new Map<number, string[]>();
  for (const m of text.matchAll(/^\/proc\/(\d+)\/status:(.*)$/gm)) {
    const pid = Number(m[1]);
    lines.set(pid, [...(lines.get(pid) ?? []), m[2]]);
  }
  const out: ProcEntry[] = [];
  for (const [pid, ls] of lines) {
    const entry = parseStatus(pid, ls.join("\n"));
    if (entry) out.push(entry);
  }
  return out;
}

/** Every process of this machine with its parent and namespace pids, through the shell. */
export async function readProcs(): Promise<ProcEntry[]> {
  return parseProcs(await runShell(READ_PROCS, []));
}

/**
 * The host pids of the processes `browserNsPid` (the browser's pid as it reports it) knows
 * as `nsPids`, among the processes below `rootPid` (the process the runtime started). Pids
 * it cannot place are left out.
 */
export function mapHostPids(
  procs: readonly ProcEntry[],
  rootPid: number,
  browserNsPid: number,
  nsPids: readonly number[],
): Map<number, number> {
  const below = new Set([rootPid]);
  const tree: ProcEntry[] = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) {
      if (!below.has(p.pid) && below.has(p.ppid)) {
        below.add(p.pid);
        tree.push(p);
        grew = true;
      }
    }
  }
  const root = procs.find((p) => p.pid === rootPid);
  if (root) tree.push(root);
  // A renderer in a deeper namespace can have the same innermost pid: the browser is the
  // shallowest process with it.
  const browser = tree.filter((p) => p.nspid.at(-1) === browserNsPid)
    .sort((a, b) => a.nspid.length - b.nspid.length)[0];
  const out = new Map<number, number>();
  if (!browser) return out;
  const level = browser.nspid.length - 1;
  for (const want of nsPids) {
    // The browser's own pid names the browser (a renderer never has it at that level).
    const found = want === browserNsPid
      ? browser
      : tree.find((p) => p !== browser && p.nspid[level] === want);
    if (found) out.set(want, found.pid);
  }
  return out;
}

/** `mapHostPids` over the live processes of this machine. */
export async function hostPids(
  rootPid: number,
  browserNsPid: number,
  nsPids: readonly number[],
): Promise<Map<number, number>> {
  return mapHostPids(await readProcs(), rootPid, browserNsPid, nsPids);
}

/** Sends SIGKILL to `pid`; false when it could not be sent (gone, not permitted). */
export async function killPid(pid: number): Promise<boolean> {
  if (!Number.isSafeInteger(pid) || pid <= 1) return false;
  try {
    await runShell(`kill -KILL "$1"`, [String(pid)]);
    return true;
  } catch {
    return false;
  }
}
