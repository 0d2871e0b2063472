/**
 * A control group per browser, made with the kernel's own mechanism (cgroupfs at the place
 * `cgroup_place.ts` found), holding the browser, every process it starts and its forwarder:
 * memory bounded with no swap to spill into, a bound on processes and threads, and a CPU
 * weight below the runtime's. The kernel enforces all of it; nothing here polls memory.
 *
 * Layout: `<place>/omotai/<instance>/<browser>`, one leaf per browser. The instance group
 * holds the CPU weight of all this runtime's browsers together against the runtime's own
 * group (its sibling); each leaf holds the browser's memory and pids bounds. On cgroup v2
 * the controllers are handed down at each step and the leaf has `memory.oom.group` set: an
 * OOM kill takes every process of that browser and none of any other.
 *
 * The browser enters its group before it runs anything: the outermost wrapper of its
 * command (`BrowserGroup.wrap`, a POSIX shell running as the runtime does) writes its own
 * pid into the leaf's `cgroup.procs` (each controller's, on v1), then execs the rest:
 * `nice`, bubblewrap, `setpriv`, the forwarder and Chromium all inherit the group, and a
 * process can leave it only with the rights of the runtime itself.
 *
 * @module
 */
import { join } from "node:path";
import { type CgroupFs, ENTER_SHELL, kernelFs } from "./cgroup_shell.ts";
import { type BrowserLimits, killCgroup, readOomKills } from "./cgroup_oom.ts";
import { CGROUP_DIR, type CgroupController, type CgroupPlace } from "./cgroup_place.ts";

export type { BrowserLimits } from "./cgroup_oom.ts";

/**
 * Threads and processes one browser may have. Measured (tests/cgroup_test.ts): a headless
 * shell with one page runs at about 55, and each further site's renderer adds some 20; a
 * page that starts 150 workers brought it to 204 (one thread each). 1024 leaves such a page
 * room beside a few busy tabs and stops a thread or fork bomb long before the machine's limit.
 */
export const BROWSER_PIDS_MAX = 1024;

/** Browsers' CPU weight: half the runtime's (the kernel's default, 100). */
export const BROWSER_CPU_WEIGHT = 50;

/** Memory kept for the runtime, its proxy and the system before browsers are sized. */
export const RUNTIME_RESERVE_BYTES = 1024 * 1024 * 1024;

/**
 * The bounds of a default browser memory limit, in MiB. The limit bounds one runaway page; it
 * reserves nothing, so the floor is what an honest heavy page needs, not the machine's share:
 * reading mode over a 60,000-paragraph page (tests/huge_page_test.ts) was OOM-killed at 512.
 */
export const BROWSER_MEMORY_MB = { min: 1024, max: 4096 } as const;

/**
 * The default memory limit of one browser, in MiB: the machine's memory less the runtime's
 * reserve, shared by the sessions it may hold, within `BROWSER_MEMORY_MB`.
 */
export function defaultBrowserMemoryMb(totalBytes: number, maxSessions: number): number {
  const share = (totalBytes - RUNTIME_RESERVE_BYTES) / Math.max(1, maxSessions) / 2 ** 20;
  return Math.min(BROWSER_MEMORY_MB.max, Math.max(BROWSER_MEMORY_MB.min, Math.floor(share)));
}

/** The shell that enters the group: `$1` files to write its pid into, then the program. */
const ENTER_SCRIPT = [
  `n=$1; shift`,
  `while [ "$n" -gt 0 ]; do`,
  `  echo $$ > "$1" || { echo "omotai: cannot enter the browser's cgroup" >&2; exit 70; }`,
  `  shift; n=$((n-1))`,
  `done`,
  `exec "$@"`,
].join("\n");

/** What `BrowserGroups.open` needs. */
export interface BrowserGroupsOptions {
  place: CgroupPlace;
  /** The runtime instance's name (its profile instance directory's). */
  instance: string;
  limits: BrowserLimits;
  log(line: string): void;
  fs?: CgroupFs;
}

/** Every browser group of one runtime instance. */
export class BrowserGroups {
  readonly place: CgroupPlace;
  readonly limits: BrowserLimits;
  readonly #fs: CgroupFs;
  readonly #log: (line: string) => void;
  /** The instance group's directory per controller's hierarchy. */
  readonly #roots: Map<CgroupController, string>;
  /** Groups not yet removed (the runtime's end waits for them). */
  readonly #open = new Set<BrowserGroup>();
  #next = 0;

  private constructor(options: BrowserGroupsOptions, roots: Map<CgroupController, string>) {
    this.place = options.place;
    this.limits = options.limits;
    this.#fs = options.fs ?? kernelFs;
    this.#log = options.log;
    this.#roots = roots;
  }

  /** `v2`, or `v1` on a hybrid host. */
  get backend(): "v2" | "v1" {
    return this.place.backend;
  }

  /**
   * Makes `omotai/<instance>` at `place` with the browsers' CPU weight, handing the
   * controllers down on v2; throws (the file and the system's error) when it cannot.
   */
  static async open(options: BrowserGroupsOptions): Promise<BrowserGroups> {
    const fs = options.fs ?? kernelFs;
    const { place, instance, limits } = options;
    const roots = new Map<CgroupController, string>();
    if (place.backend === "v2") {
      const enable = place.controllers.map((c) => `+${c}`).join(" ");
      const top = join(place.dir, CGROUP_DIR);
      const root = join(top, instance);
      await fs.write(join(place.dir, "cgroup.subtree_control"), enable);
      await fs.mkdir(top);
      await fs.write(join(top, "cgroup.subtree_control"), enable);
      await fs.mkdir(root);
      await fs.write(join(root, "cgroup.subtree_control"), enable);
      if (place.controllers.includes("cpu")) {
        await fs.write(join(root, "cpu.weight"), String(limits.cpuWeight));
      }
      for (const c of place.controllers) roots.set(c, root);
    } else {
      for (const [c, dir] of Object.entries(place.dirs) as [CgroupController, string][]) {
        const top = join(dir, CGROUP_DIR);
        await fs.mkdir(top);
        await fs.mkdir(join(top, instance));
        roots.set(c, join(top, instance));
      }
      const cpu = roots.get("cpu");
      if (cpu) await fs.write(join(cpu, "cpu.shares"), String(v1Shares(limits.cpuWeight)));
    }
    return new BrowserGroups(options, roots);
  }

  /** A fresh group for one browser, its bounds set, nothing in it yet. */
  async create(): Promise<BrowserGroup> {
    const name = `b${++this.#next}`;
    const fs = this.#fs;
    const limits = this.limits;
    const dirs = new Map<CgroupController, string>();
    try {
      for (const [c, root] of this.#roots) {
        const dir = join(root, name);
        // v2: one directory serves every controller.
        if (![...dirs.values()].includes(dir)) await fs.mkdir(dir);
        dirs.set(c, dir);
      }
      const memory = dirs.get("memory")!;
      const pids = dirs.get("pids");
      const cpu = dirs.get("cpu");
      if (this.place.backend === "v2") {
        await fs.write(join(memory, "memory.max"), String(limits.memoryBytes));
        // Absent only where the kernel keeps no swap accounting (no swap to spill into).
        const swap = join(memory, "memory.swap.max");
        if (await fs.exists(swap)) await fs.write(swap, "0");
        // One OOM kill takes the whole browser, not a renderer the browser would restart.
        await fs.write(join(memory, "memory.oom.group"), "1");
        if (pids) await fs.write(join(pids, "pids.max"), String(limits.pids));
        if (cpu) await fs.write(join(cpu, "cpu.weight"), String(limits.cpuWeight));
      } else {
        await fs.write(join(memory, "memory.limit_in_bytes"), String(limits.memoryBytes));
        // memory+swap at the same bound: no swap. Absent without swap accounting.
        const memsw = join(memory, "memory.memsw.limit_in_bytes");
        if (await fs.exists(memsw)) await fs.write(memsw, String(limits.memoryBytes));
        const swappiness = join(memory, "memory.swappiness");
        if (await fs.exists(swappiness)) await fs.write(swappiness, "0");
        if (pids) await fs.write(join(pids, "pids.max"), String(limits.pids));
        if (cpu) await fs.write(join(cpu, "cpu.shares"), String(v1Shares(limits.cpuWeight)));
      }
    } catch (err) {
      await removeDirs(fs, [...new Set(dirs.values())]);
      throw err;
    }
    const group = new BrowserGroup({
      name,
      backend: this.place.backend,
      dirs,
      fs,
      log: this.#log,
      removed: () => this.#open.delete(group),
    });
    this.#open.add(group);
    return group;
  }

  /**
   * Removes the instance groups, after every browser group (their browsers are gone by
   * then: the sessions end first; what is left is killed where the kernel can).
   */
  async close(): Promise<void> {
    await Promise.all([...this.#open].map((g) => g.remove()));
    await removeDirs(this.#fs, [...new Set(this.#roots.values())]);
  }
}

/** `cpu.weight` (default 100) as v1 `cpu.shares` (default 1024). */
function v1Shares(weight: number): number {
  return Math.max(2, Math.round(weight * 1024 / 100));
}

async function removeDirs(fs: CgroupFs, dirs: string[]): Promise<void> {
  for (const dir of dirs) await fs.rmdir(dir).catch(() => {});
}

/** How long a group's removal waits for its last processes to go. */
const EMPTY_WAIT_MS = 5_000;

/** One browser's group. */
export class BrowserGroup {
  /** The group's name under the instance group (`b<n>`). */
  readonly name: string;
  readonly backend: "v2" | "v1";
  readonly #dirs: Map<CgroupController, string>;
  readonly #fs: CgroupFs;
  readonly #log: (line: string) => void;
  #removed: Promise<void> | undefined;
  #kills = 0;
  #gone = false;
  readonly #removedHook: (() => void) | undefined;

  constructor(
    options: {
      name: string;
      backend: "v2" | "v1";
      dirs: Map<CgroupController, string>;
      fs: CgroupFs;
      log(line: string): void;
      /** Told once the group is removed (or given up on). */
      removed?(): void;
    },
  ) {
    this.#removedHook = options.removed;
    this.name = options.name;
    this.backend = options.backend;
    this.#dirs = options.dirs;
    this.#fs = options.fs;
    this.#log = options.log;
  }

  /** The memory group's directory. */
  get dir(): string {
    return this.#dirs.get("memory")!;
  }

  /**
   * The command prefix that puts what follows into this group before it runs anything:
   * append the rest of the browser's command (the sandbox, `nice`, the browser).
   */
  get wrap(): string[] {
    const procs = [...new Set(this.#dirs.values())].map((d) => join(d, "cgroup.procs"));
    return [ENTER_SHELL, "-c", ENTER_SCRIPT, "omotai-cgroup", String(procs.length), ...procs];
  }

  /**
   * Processes of this group the kernel killed for memory, as last counted (`checkOom`);
   * after the group's removal, the count it had then.
   */
  oomKills(): number {
    return this.#kills;
  }

  /**
   * Counts the processes of this group the kernel killed for memory now (`oom_kill` of v2's
   * `memory.events`, v1's `memory.oom_control`). There is no notice to wait on: the kernel's
   * (inotify on `memory.events`, an eventfd on v1) is out of the runtime's reach without
   * `--allow-all`, so callers ask when the browser exits, a target crashes or a call fails.
   */
  async checkOom(): Promise<number> {
    if (this.#gone) return this.#kills;
    // Unreadable (removed meanwhile): the last count stands.
    const now = await readOomKills(this.#fs, this.dir, this.backend);
    if (now !== undefined) this.#kills = Math.max(this.#kills, now);
    return this.#kills;
  }

  /**
   * The most memory the group used at once, in bytes (`memory.peak`, v1's
   * `memory.max_usage_in_bytes`), if the kernel keeps it.
   */
  async peakBytes(): Promise<number | undefined> {
    const file = this.backend === "v2" ? "memory.peak" : "memory.max_usage_in_bytes";
    try {
      const n = Number((await this.#fs.read(join(this.dir, file))).trim());
      return Number.isFinite(n) ? n : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Kills every process of the group at once (v2's `cgroup.kill`); false where the kernel
   * has none (v1, before Linux 5.14): the caller then kills the browser's first process,
   * whose pid namespace (or Chromium itself) ends the rest.
   */
  async kill(): Promise<boolean> {
    if (this.backend !== "v2") return false;
    return await killCgroup(this.#fs, this.dir);
  }

  /**
   * Removes the group once its processes are gone (the browser has exited): on v2 what is
   * left is killed; the removal waits a bounded time for the kernel to let them go, and a
   * group still busy after it is logged and left.
   */
  remove(): Promise<void> {
    this.#removed ??= this.#remove();
    return this.#removed;
  }

  async #remove(): Promise<void> {
    // Its count outlives it: the browser's holder asks why it ended after it is gone.
    await this.checkOom();
    this.#gone = true;
    const dirs = [...new Set(this.#dirs.values())];
    if (await this.#populated()) await this.kill();
    const until = Date.now() + EMPTY_WAIT_MS;
    for (const dir of dirs) {
      for (;;) {
        try {
          await this.#fs.rmdir(dir);
          break;
        } catch (err) {
          if (err instanceof Deno.errors.NotFound) break;
          if (Date.now() > until) {
            this.#log(`could not remove the browser's cgroup ${dir}: ${(err as Error).name}`);
            break;
          }
          // Its last processes are still exiting (EBUSY): the kernel lets go in a moment.
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    this.#removedHook?.();
  }

  async #populated(): Promise<boolean> {
    try {
      if (this.backend === "v2") {
        return /^populated 1$/m.test(await this.#fs.read(join(this.dir, "cgroup.events")));
      }
      return (await this.#fs.read(join(this.dir, "cgroup.procs"))).trim() !== "";
    } catch {
      return false;
    }
  }
}
