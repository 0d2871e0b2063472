/**
 * A cgroup per browser made by systemd, where systemd runs the host and hands the runtime no
 * cgroup2 subtree of its own to write (a service without `Delegate=`, a user's login session):
 * there the groups are systemd's to make, and a runtime writing into systemd's tree behind its
 * back would have its settings undone. The browser's command then starts under
 * `systemd-run --scope`, which asks the manager (the system's as root, else the user's, with
 * `--user`) for a transient scope unit with the browser's bounds as unit properties, moves
 * itself into the scope's cgroup and execs the rest of the command in place: `nice`,
 * bubblewrap, the socat forwarder and Chromium with every process it starts all inherit it.
 *
 * | property          | cgroup file        | value                              |
 * | ----------------- | ------------------ | ---------------------------------- |
 * | `MemoryMax=`      | `memory.max`       | `limits.memoryBytes`               |
 * | `MemorySwapMax=0` | `memory.swap.max`  | 0: no swap to spill into           |
 * | `TasksMax=`       | `pids.max`         | `limits.pids`                      |
 * | `CPUWeight=`      | `cpu.weight`       | `limits.cpuWeight` (systemd's 100) |
 *
 * Once the browser answers, its scope's cgroup is read from `/proc/<pid>/cgroup` (the command
 * is systemd-run's own process, so the browser's pid names it) and checked: the group must be
 * `<unit>.scope` and carry the bounds asked for, else the browser is ended and its launch
 * fails. From then on the runtime reads the group's OOM count and kills it exactly as it does
 * a group it made itself (`cgroup_oom.ts`); `--collect` has systemd unload the unit once its
 * last process is gone, so nothing is left to remove.
 *
 * @module
 */
import { basename, join } from "node:path";
import { type BrowserLimits, killCgroup, readOomKills } from "./cgroup_oom.ts";
import { cgroup2Mount, type CgroupLookup, systemLookup } from "./cgroup_place.ts";
import { type CgroupFs, CgroupFsError, kernelFs } from "./cgroup_shell.ts";

/** Where `systemd-run` is looked for, in order (the launcher grants the one it finds). */
export const SYSTEMD_RUN_PATHS: readonly string[] = ["/usr/bin/systemd-run", "/bin/systemd-run"];

/** Exists when systemd is the host's init (what `sd_booted()` checks). */
export const SYSTEMD_BOOTED = "/run/systemd/system";

/** What a host run by systemd offers the browsers' scopes. */
export interface SystemdHost {
  /** The `systemd-run` to start each browser under. */
  systemdRun: string;
  /** The user's own manager (`--user`): the runtime is not root. */
  user: boolean;
  /** Where the cgroup2 hierarchy is mounted (a scope's group is under it). */
  mount: string;
  /**
   * The controllers the manager can give a scope (`memory` and `pids` always): each scope's
   * group is checked for their bounds once its browser runs.
   */
  controllers: readonly string[];
  /** What `systemd-run` needs in its environment to reach the manager. */
  env: Readonly<Record<string, string>>;
  /** systemd's version (`systemd-run --version`): scopes take `OOMPolicy=` from 253. */
  version: number;
}

/** What `detectSystemd` found: not systemd's host, its scopes, or why none. */
export type SystemdLocation =
  | { running: false }
  | { running: true; host: SystemdHost }
  | { running: true; reason: string };

/** How `detectSystemd` looks; every look at the system can be replaced (tests). */
export interface SystemdDetectOptions {
  /** This process's uid: root asks the system's manager, others their own. */
  uid?: number;
  /** A directory standing for `/` (tests); default the real one. */
  root?: string;
  /** Where `systemd-run` is looked for (under `root`); default `SYSTEMD_RUN_PATHS`. */
  paths?: readonly string[];
  /** How files are looked at (through the shell by default: `/sys` needs it). */
  fs?: Pick<CgroupFs, "exists">;
  /** mountinfo and the hierarchy's `cgroup.controllers` files. */
  lookup?: Pick<CgroupLookup, "mountinfo" | "read">;
  /** systemd's version as `systemd-run --version` says it; rejects when it does not run. */
  version?(systemdRun: string): Promise<number>;
}

/**
 * Whether systemd runs this host and, if so, whether it can give each browser a scope with
 * its bounds: `systemd-run` installed, a cgroup2 hierarchy whose `memory` and `pids`
 * controllers the manager can hand down (on a hybrid host `MemoryMax=` binds nothing), and for
 * a runtime that is not root the user's own manager running (its private socket). Never
 * writes, never throws.
 */
export async function detectSystemd(options: SystemdDetectOptions = {}): Promise<SystemdLocation> {
  const root = options.root ?? "";
  const fs = options.fs ?? kernelFs;
  const lookup = options.lookup ?? systemLookup;
  const exists = (path: string) => fs.exists(`${root}${path}`).catch(() => false);
  if (!(await exists(SYSTEMD_BOOTED))) return { running: false };
  const no = (reason: string) => ({ running: true as const, reason });
  let systemdRun: string | undefined;
  for (const path of options.paths ?? SYSTEMD_RUN_PATHS) {
    if (await exists(path)) {
      systemdRun = `${root}${path}`;
      break;
    }
  }
  if (!systemdRun) return no("systemd-run is not installed");
  let version: number;
  try {
    version = await (options.version ?? systemdVersion)(systemdRun);
  } catch (err) {
    return no(`${systemdRun} does not run here: ${(err as Error).message}`.slice(0, 200));
  }
  let mount: string | undefined;
  try {
    mount = cgroup2Mount(await lookup.mountinfo());
  } catch (err) {
    return no(`cannot read this process's mounts (${(err as Error).message})`);
  }
  if (!mount) return no("no cgroup2 mount for systemd's scopes");
  const uid = options.uid ?? currentUid();
  const user = uid !== 0;
  // The manager hands down what its own group has: the root's for the system's, the user's
  // service's (its `Delegate=`) for a user's.
  const managerDir = user
    ? join(mount, "user.slice", `user-${uid}.slice`, `user@${uid}.service`)
    : mount;
  const controllers = ((await lookup.read(join(managerDir, "cgroup.controllers"))) ?? "")
    .trim().split(/\s+/).filter(Boolean);
  if (!controllers.includes("memory") || !controllers.includes("pids")) {
    return no(
      `systemd's ${
        user ? "user" : "system"
      } manager has no memory and pids controllers to give (${managerDir} has: ${
        controllers.join(", ") || "none"
      })`,
    );
  }
  const env: Record<string, string> = {};
  if (user) {
    const runtimeDir = `/run/user/${uid}`;
    if (!(await exists(`${runtimeDir}/systemd/private`))) {
      return no(`no systemd user manager runs for uid ${uid} (loginctl enable-linger)`);
    }
    // systemd-run finds the user's manager through it; the browser's environment has none.
    env.XDG_RUNTIME_DIR = runtimeDir;
  }
  return { running: true, host: { systemdRun, user, mount, controllers, env, version } };
}

/** `systemd 252 (252.39-1~deb12u2)` → 252. */
async function systemdVersion(systemdRun: string): Promise<number> {
  const out = await new Deno.Command(systemdRun, {
    args: ["--version"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
  }).output();
  const m = /^systemd (\d+)/.exec(new TextDecoder().decode(out.stdout));
  if (!out.success || !m) throw new Error(`--version exited with ${out.code}`);
  return Number(m[1]);
}

/**
 * The first systemd whose scopes take `OOMPolicy=`; from it on a scope's default is to be
 * stopped at its first OOM kill, which would unload it (and its count) before the runtime
 * has read why its browser ended.
 */
export const SCOPE_OOM_POLICY_SINCE = 253;

function currentUid(): number {
  try {
    return Deno.uid() ?? -1;
  } catch {
    return -1;
  }
}

/**
 * The command prefix that starts the rest in a fresh scope `unit` with `limits`: append the
 * command after its closing `--`.
 */
export function scopeCommand(
  options: {
    systemdRun: string;
    user: boolean;
    unit: string;
    limits: BrowserLimits;
    /** systemd's version: from 253 the scope is told to outlive an OOM kill. */
    version: number;
  },
): string[] {
  const { limits } = options;
  return [
    options.systemdRun,
    "--scope",
    "--quiet",
    // Unloaded once its last process is gone, whether the browser ended well or not.
    "--collect",
    ...(options.user ? ["--user"] : []),
    `--unit=${options.unit}`,
    "-p",
    `MemoryMax=${limits.memoryBytes}`,
    "-p",
    "MemorySwapMax=0",
    "-p",
    `TasksMax=${limits.pids}`,
    "-p",
    `CPUWeight=${limits.cpuWeight}`,
    // The runtime reads the count and ends the browser itself (as on every backend); a
    // scope systemd stopped would be gone, count and all, before it could.
    ...(options.version >= SCOPE_OOM_POLICY_SINCE ? ["-p", "OOMPolicy=continue"] : []),
    "--",
  ];
}

/** What `SystemdScopes` needs. */
export interface SystemdScopesOptions {
  host: SystemdHost;
  /** The runtime instance's name: part of each scope's unit name. */
  instance: string;
  limits: BrowserLimits;
  log(line: string): void;
  fs?: CgroupFs;
}

/** Every browser scope of one runtime instance. */
export class SystemdScopes {
  readonly backend = "systemd" as const;
  readonly host: SystemdHost;
  readonly limits: BrowserLimits;
  readonly #options: SystemdScopesOptions;
  /** Unit names are this start's own: a scope a crashed runtime left is never reused. */
  readonly #prefix: string;
  readonly #open = new Set<SystemdScope>();
  #next = 0;

  constructor(options: SystemdScopesOptions) {
    this.#options = options;
    this.host = options.host;
    this.limits = options.limits;
    const tag = crypto.randomUUID().slice(0, 8);
    this.#prefix = `omotai-${options.instance.replace(/[^A-Za-z0-9_.-]/g, "_")}-${tag}`;
  }

  /** A scope for one browser, made when its command runs. */
  create(): Promise<SystemdScope> {
    const scope: SystemdScope = new SystemdScope({
      unit: `${this.#prefix}-b${++this.#next}.scope`,
      host: this.host,
      limits: this.limits,
      fs: this.#options.fs ?? kernelFs,
      removed: () => this.#open.delete(scope),
    });
    this.#open.add(scope);
    return Promise.resolve(scope);
  }

  /** Keeps each open scope's last OOM count; systemd unloads the units themselves. */
  async close(): Promise<void> {
    await Promise.all([...this.#open].map((s) => s.remove()));
  }
}

/** One browser's scope. */
export class SystemdScope {
  /** The transient unit's name (`omotai-<instance>-<tag>-b<n>.scope`). */
  readonly unit: string;
  /** `systemd-run --scope ... --`: the outermost prefix of the browser's command. */
  readonly wrap: readonly string[];
  /** What that prefix needs in its environment (the user's runtime dir, for `--user`). */
  readonly env: Readonly<Record<string, string>>;
  readonly #host: SystemdHost;
  readonly #limits: BrowserLimits;
  readonly #fs: CgroupFs;
  readonly #removedHook: () => void;
  #dir: string | undefined;
  #removed: Promise<void> | undefined;
  #kills = 0;
  #gone = false;

  constructor(
    options: {
      unit: string;
      host: SystemdHost;
      limits: BrowserLimits;
      fs: CgroupFs;
      removed(): void;
    },
  ) {
    this.unit = options.unit;
    this.#host = options.host;
    this.#limits = options.limits;
    this.#fs = options.fs;
    this.#removedHook = options.removed;
    this.wrap = scopeCommand({ ...options.host, unit: options.unit, limits: options.limits });
    this.env = options.host.env;
  }

  /** The scope's cgroup directory, once its browser runs (`started`). */
  get dir(): string | undefined {
    return this.#dir;
  }

  /**
   * Finds the scope's group from the browser's `/proc/<pid>/cgroup` and checks it: named
   * `<unit>`, with `memory.max`, `pids.max` (and `memory.swap.max`, `cpu.weight` where the
   * kernel keeps them) as asked for each controller the manager offers. Throws (the launch
   * then fails and the browser is ended) when the browser is elsewhere or unbounded.
   */
  async started(pid: number | undefined): Promise<void> {
    if (pid === undefined) throw new CgroupFsError("the browser has no pid to find its scope by");
    const text = await this.#fs.read(`/proc/${pid}/cgroup`);
    const path = /^0::(\/.*)$/m.exec(text)?.[1];
    if (path === undefined || basename(path) !== this.unit) {
      throw new CgroupFsError(
        `the browser did not start in its scope ${this.unit} (its cgroup2 group is ${
          path ?? "unknown"
        })`,
      );
    }
    const dir = join(this.#host.mount, path);
    const limits = this.#limits;
    const wanted: { file: string; value: number; controller: string; optional?: boolean }[] = [
      { file: "memory.max", value: limits.memoryBytes, controller: "memory" },
      // Absent only where the kernel keeps no swap accounting (no swap to spill into).
      { file: "memory.swap.max", value: 0, controller: "memory", optional: true },
      { file: "pids.max", value: limits.pids, controller: "pids" },
      // A user's manager may not be handed the cpu controller: the weight is then the
      // niceness alone, as the start line's `nice` says.
      { file: "cpu.weight", value: limits.cpuWeight, controller: "cpu", optional: true },
    ];
    for (const w of wanted) {
      if (!this.#host.controllers.includes(w.controller)) continue;
      const file = join(dir, w.file);
      if (!(await this.#fs.exists(file).catch(() => false))) {
        if (w.optional) continue;
        throw new CgroupFsError(`the browser's scope ${this.unit} has no ${w.file}: unbounded`);
      }
      const got = (await this.#fs.read(file)).trim();
      if (got !== String(w.value)) {
        throw new CgroupFsError(
          `the browser's scope ${this.unit} has ${w.file} ${got}, not ${w.value}`,
        );
      }
    }
    this.#dir = dir;
  }

  /** Processes of the scope the kernel killed for memory, as last counted. */
  oomKills(): number {
    return this.#kills;
  }

  /** Counts them now, from the scope's `memory.events` (kept once the scope is gone). */
  async checkOom(): Promise<number> {
    if (this.#gone || this.#dir === undefined) return this.#kills;
    const now = await readOomKills(this.#fs, this.#dir, "v2");
    if (now !== undefined) this.#kills = Math.max(this.#kills, now);
    return this.#kills;
  }

  /** Kills every process of the scope at once (`cgroup.kill`); false where it cannot. */
  async kill(): Promise<boolean> {
    if (this.#gone || this.#dir === undefined) return false;
    return await killCgroup(this.#fs, this.#dir);
  }

  /**
   * Keeps the scope's last OOM count; the unit itself is systemd's, unloaded (`--collect`)
   * once its last process is gone.
   */
  remove(): Promise<void> {
    this.#removed ??= (async () => {
      await this.checkOom();
      this.#gone = true;
      this.#removedHook();
    })();
    return this.#removed;
  }
}
