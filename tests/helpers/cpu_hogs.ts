/**
 * Load beside a test: processes that spin on the CPU until disposed, so a test of a hostile
 * page runs on a machine as busy as the one the issue saw (two hogs on two cores).
 *
 * @module
 */

/** Spinning processes; disposing kills them (each by its own pid) and reaps them. */
export interface CpuHogs extends AsyncDisposable {
  readonly count: number;
}

/**
 * Starts `count` shell loops that spin forever. Each is also bounded by `timeout` (15 min),
 * so a test process killed before it disposes them leaves nothing spinning for long.
 */
export function cpuHogs(count = 2): CpuHogs {
  const children = Array.from({ length: count }, () =>
    new Deno.Command("timeout", {
      args: ["900", "sh", "-c", "while :; do :; done"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn());
  return {
    count,
    async [Symbol.asyncDispose]() {
      // TERM, not KILL: `timeout` passes a TERM on to its loop, while a KILL of `timeout`
      // alone left the loop spinning, reparented to init, with no bound at all.
      for (const c of children) {
        try {
          c.kill("SIGTERM");
        } catch {
          // Already gone.
        }
      }
      await Promise.all(children.map((c) => c.status));
    },
  };
}
