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
 * Signals go through `/usr/bin/kill` (Deno's own `Deno.kill` needs unscoped `--allow-run`).
 *
 * @module
 */

/** One process's parent and its pids by namespace level (outermost first). */
interface ProcEntry {
  pid: number;
  ppid: number;
  nspid: number[];
}

/** The `kill` the runtime signals renderers with (granted in `launcher/permissions.ts`). */
export const KILL_PROGRAM = "/usr/bin/kill";

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

async function readProcs(): Promise<ProcEntry[]> {
  const out: ProcEntry[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const entry = parseStatus(Number(e.name), await Deno.readTextFile(`/proc/${e.name}/status`));
      if (entry) out.push(entry);
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
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
    const found = tree.find((p) => p !== browser && p.nspid[level] === want);
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
  try {
    const out = await new Deno.Command(KILL_PROGRAM, {
      args: ["-KILL", String(pid)],
      stdin: "null",
      stdout: "null",
      stderr: "null",
      clearEnv: true,
    }).output();
    return out.success;
  } catch {
    return false;
  }
}
