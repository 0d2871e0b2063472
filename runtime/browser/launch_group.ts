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
  /** The kernel's interface: `v2`, or `v1` on a hybrid host. */
  readonly backend: "v2" | "v1";
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
  /** Processes of the group the kernel killed for memory, as last counted. */
  oomKills(): number;
  /** Counts them now (kept after the group is removed). */
  checkOom(): Promise<number>;
  /** Kills every process of the group at once; false where the kernel cannot. */
  kill(): Promise<boolean>;
  /** Removes the group once its processes are gone. */
  remove(): Promise<void>;
}
