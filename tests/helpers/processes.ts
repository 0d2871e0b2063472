/**
 * The machine's processes as tests and benchmarks look at them (Linux `/proc`): who runs
 * below whom, with what name and command line, how much memory each holds (PSS), and whether
 * one is still alive.
 *
 * @module
 */

/** One live process. */
export interface Proc {
  pid: number;
  ppid: number;
  /** Its name (`Name:` of its status, at most 15 characters). */
  comm: string;
  uid: number;
  /** `Seccomp:` of its status (2: filtering). */
  seccomp: number;
  argv: string[];
}

/** Every live (non-zombie) process. */
export function processes(): Proc[] {
  const out: Proc[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const status = Deno.readTextFileSync(`/proc/${e.name}/status`);
      const field = (k: string) => Number(new RegExp(`^${k}:\\s*(\\S+)`, "m").exec(status)?.[1]);
      if (/^State:\s*Z/m.test(status)) continue;
      const argv = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).split("\0")
        .filter((a) => a !== "");
      out.push({
        pid: Number(e.name),
        ppid: field("PPid"),
        comm: /^Name:\s*(.*)$/m.exec(status)?.[1] ?? "",
        uid: field("Uid"),
        seccomp: field("Seccomp"),
        argv,
      });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

/**
 * The processes below `root` (not `root` itself), from one listing, leaving out the subtrees
 * of `skip`.
 */
export function descendants(
  root: number,
  all: readonly Proc[] = processes(),
  skip: readonly number[] = [],
): Proc[] {
  const found = new Set([root]);
  const out: Proc[] = [];
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!found.has(p.pid) && found.has(p.ppid) && !skip.includes(p.pid)) {
        found.add(p.pid);
        out.push(p);
        grew = true;
      }
    }
  }
  return out;
}

/** The `Pss:` line of a `/proc/PID/smaps_rollup`, in KiB (0 when absent). */
export function parsePssKiB(smapsRollup: string): number {
  const m = smapsRollup.match(/^Pss:\s+(\d+)\s+kB/m);
  return m ? Number(m[1]) : 0;
}

/** The memory `pid` holds, its proportional share of what it shares (PSS), in KiB; 0 if gone. */
export async function pssKiB(pid: number): Promise<number> {
  try {
    return parsePssKiB(await Deno.readTextFile(`/proc/${pid}/smaps_rollup`));
  } catch {
    return 0;
  }
}

/** Whether `pid` runs (a zombie does not). */
export function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}
