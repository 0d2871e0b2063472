/**
 * The port through which a browser gets its cgroup: `runtime/isolation/cgroup.ts` implements
 * it, `cli/` hands it in, `launch.ts` puts each browser into a fresh group and `Live` keeps
 * it for the OOM kills it records.
 *
 * @module
 */

/**
 * A control group per browser (`runtime/isolation/cgroup.ts` implements it, `cli/` hands it
 * in): bounds on its memory, processes and CPU that the kernel enforces.
 */
export interface LaunchGroups {
  /**
   * The kernel's interface: `v2`, `v1` on a hybrid host, or `systemd`: cgroup v2 groups that
   * systemd makes (a scope per browser, `systemd-run --scope`).
   */
  readonly backend: "v2" | "v1" | "systemd";
  /** A fresh group for one browser, its bounds set, nothing in it yet. */
  create(): Promise<LaunchGroup>;
}

/** One browser's group. */
export interface LaunchGroup {
  /**
   * The outermost command prefix: it enters the group, then execs the rest, so the browser
   * and everything it starts are in it before anything runs.
   */
  readonly wrap: readonly string[];
  /** What that prefix needs in its environment, on top of the browser's (it reaches both). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Told the started process's pid once the browser answers, before anything else runs in
   * it: a group made by someone else is found (and checked) then. Throws when the browser is
   * not in the group it was to have, bounded as asked: the launch then fails.
   */
  started?(pid: number | undefined): Promise<void>;
  /** Processes of the group the kernel killed for memory, as last counted. */
  oomKills(): number;
  /** Counts them now (kept after the group is removed). */
  checkOom(): Promise<number>;
  /** Kills every process of the group at once; false where the kernel cannot. */
  kill(): Promise<boolean>;
  /** Removes the group once its processes are gone. */
  remove(): Promise<void>;
}
