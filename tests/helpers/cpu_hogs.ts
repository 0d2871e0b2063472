/**
 * Load beside a test: processes that spin on the CPU until disposed, so a test of a hostile
 * page runs on a machine as busy as the one the issue saw (two hogs on two cores).
 *
 * `busyMachine()` is what a test wants: it tops the machine's load up to a target and no
 * further, so a suite that already runs beside hogs (or other tests) is not made busier by the
 * test's own. `cpuHogs()` starts hogs unconditionally.
 *
 * @module
 */

/** Spinning processes; disposing kills them (each by its own pid) and reaps them. */
export interface CpuHogs extends AsyncDisposable {
  readonly count: number;
}

/** Options of `cpuHogs()`. */
export interface CpuHogsOptions {
  /** The bound of each loop, in seconds (default 900): a killed test leaves nothing for long. */
  boundS?: number;
  /**
   * Each loop in a session of its own (`setsid`), as hogs another user or service runs are:
   * with the kernel's autogroup on, the scheduler shares the CPU between sessions first. The
   * default runs them in the caller's session, where they take the caller's own share.
   */
  ownSession?: boolean;
}

/**
 * Starts `count` shell loops that spin forever. Each is also bounded by `timeout` (15 min by
 * default), so a test process killed before it disposes them leaves nothing spinning for long.
 */
export function cpuHogs(count = 2, options: CpuHogsOptions = {}): CpuHogs {
  const loop = ["timeout", String(options.boundS ?? 900), "sh", "-c", "while :; do :; done"];
  // A spawned child leads no process group, so `setsid` makes its session and execs `timeout`
  // in place: the pid kept below is still the one a TERM must reach.
  const argv = options.ownSession ? ["setsid", ...loop] : loop;
  const children = Array.from({ length: count }, () =>
    new Deno.Command(argv[0], {
      args: argv.slice(1),
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

/** Options of `busyMachine()`. */
export interface BusyMachineOptions {
  /**
   * Runnable tasks on the machine right now, the test's own hogs and the reader included
   * (default: the running count of /proc/loadavg). A test of the helper injects its own.
   */
  runnable?: () => number;
  /** How long one measure samples `runnable` (default 500 ms). */
  sampleMs?: number;
  /** How often the load is measured again and the hogs adjusted (default 2 s). */
  everyMs?: number;
}

/** Hogs that keep the machine at least as busy as `target` spinning processes. */
export interface BusyMachine extends AsyncDisposable {
  /** Runnable tasks to keep (the hogs' target). */
  readonly target: number;
  /** The test's own hogs running now (0 when the machine was busy enough without them). */
  readonly count: number;
  /** The most of its own hogs it ran at once. */
  readonly most: number;
  /** Resolves once a measure begun after the call has adjusted the hogs (for tests of the helper). */
  settled(): Promise<void>;
}

/**
 * The hogs missing for `target`: the machine's other busy tasks are the sampled mean of
 * runnable tasks less the test's own hogs and the reader itself; the rest up to `target` is
 * started, rounded up (the test's claim is "at least as busy"), never more than `target`.
 */
export function missingHogs(target: number, runnableMean: number, ownHogs: number): number {
  const others = Math.max(0, runnableMean - ownHogs - 1);
  // The 0.1 keeps a mean of 1.95 other tasks from starting a hog for the last 0.05.
  return Math.min(target, Math.max(0, Math.ceil(target - others - 0.1)));
}

/** The running count of /proc/loadavg ("0.52 0.58 0.59 3/121 4242" reads 3). */
export function loadavgRunning(text: string): number {
  const m = text.match(/^\S+ \S+ \S+ (\d+)\/\d+/);
  if (!m) throw new Error(`not /proc/loadavg: ${JSON.stringify(text.slice(0, 80))}`);
  return Number(m[1]);
}

function readRunning(): number {
  // A synchronous read: the reading thread is the one runnable task of this process that
  // `missingHogs` takes off.
  return loadavgRunning(Deno.readTextFileSync("/proc/loadavg"));
}

/**
 * Keeps the machine at least as busy as `target` spinning processes (default two: two hogs on
 * two cores, the load the tests must pass under) while the test runs, starting only
 * the hogs that the machine's other load leaves missing, and measuring again every `everyMs`,
 * so a test beside two external hogs, or beside another test file, adds none. Everything
 * runnable counts as load, the test's own browser included (and, in a container, whatever else
 * its host runs: /proc/loadavg is the host's).
 */
export async function busyMachine(
  target = 2,
  options: BusyMachineOptions = {},
): Promise<BusyMachine> {
  const runnable = options.runnable ?? readRunning;
  const sampleMs = options.sampleMs ?? 500;
  const everyMs = options.everyMs ?? 2_000;
  const hogs: CpuHogs[] = [];
  let most = 0;
  let stopped = false;
  /** Adjustments begun; a waiter is owed the end of one begun after it asked. */
  let begun = 0;
  let waiters: { after: number; resolve: () => void }[] = [];

  const measure = async () => {
    const samples: number[] = [];
    const until = Date.now() + sampleMs;
    do {
      samples.push(runnable());
      await new Promise((r) => setTimeout(r, Math.max(1, Math.floor(sampleMs / 20))));
    } while (Date.now() < until);
    return samples.reduce((a, b) => a + b, 0) / samples.length;
  };

  const adjust = async () => {
    const mine = ++begun;
    const want = missingHogs(target, await measure(), hogs.length);
    if (stopped) return;
    while (hogs.length < want) hogs.push(cpuHogs(1));
    const extra = hogs.splice(want);
    await Promise.all(extra.map((h) => h[Symbol.asyncDispose]()));
    most = Math.max(most, hogs.length);
    const done = waiters.filter((w) => w.after < mine);
    waiters = waiters.filter((w) => w.after >= mine);
    for (const w of done) w.resolve();
  };

  await adjust();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running = Promise.resolve();
  const loop = () => {
    timer = setTimeout(() => {
      running = adjust().then(() => {
        if (!stopped) loop();
      });
    }, everyMs);
  };
  loop();

  return {
    target,
    get count() {
      return hogs.length;
    },
    get most() {
      return most;
    },
    settled: () => new Promise<void>((resolve) => waiters.push({ after: begun, resolve })),
    async [Symbol.asyncDispose]() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await Promise.all(hogs.splice(0).map((h) => h[Symbol.asyncDispose]()));
      for (const w of waiters.splice(0)) w.resolve();
    },
  };
}
