/**
 * What one browser's group is bounded by, and the two things the runtime asks of a group once
 * its browser runs: how many of its processes the kernel killed for memory, and to kill all of
 * them at once. Shared by the groups the runtime makes on cgroupfs (`cgroup.ts`) and the scopes
 * systemd makes for it (`systemd_scope.ts`): whoever made the group, the kernel's files in it
 * are the same, so one reader serves both.
 *
 * @module
 */
import { join } from "node:path";
import type { CgroupFs } from "./cgroup_shell.ts";

/** What one browser's group bounds. */
export interface BrowserLimits {
  /** `memory.max` (v2) / `memory.limit_in_bytes` (v1); swap is 0 either way. */
  memoryBytes: number;
  /** `pids.max`: processes and threads of the whole browser. */
  pids: number;
  /** `cpu.weight` against the runtime's 100 (v1: `cpu.shares` of 1024 scaled alike). */
  cpuWeight: number;
}

/**
 * The kernel's count of the group's processes killed for memory (`oom_kill` of v2's
 * `memory.events`, v1's `memory.oom_control`), or undefined when the file cannot be read
 * (the group is gone) or has no such line.
 */
export async function readOomKills(
  fs: CgroupFs,
  dir: string,
  backend: "v2" | "v1",
): Promise<number | undefined> {
  const file = backend === "v2" ? "memory.events" : "memory.oom_control";
  try {
    const m = /^oom_kill (\d+)$/m.exec(await fs.read(join(dir, file)));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Kills every process of a cgroup v2 group at once (`cgroup.kill`, Linux 5.14); false where
 * the kernel has none or it cannot be written.
 */
export async function killCgroup(fs: CgroupFs, dir: string): Promise<boolean> {
  const file = join(dir, "cgroup.kill");
  if (!(await fs.exists(file).catch(() => false))) return false;
  try {
    await fs.write(file, "1");
    return true;
  } catch {
    return false;
  }
}
