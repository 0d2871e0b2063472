/**
 * Starting one browser: a fresh profile, the launch flags (the egress proxy's), Chromium over
 * the pipe in its sandbox at a lower priority; then, for its session, downloads refused,
 * every target prepared while paused, the first tab adopted. A browser may be started ahead
 * of its session (`WarmPool`) and taken over by it. Whatever fails on the way releases what
 * was made before it.
 *
 * @module
 */
import {
  type BrowserProcess,
  type ByteRateLimits,
  describeError,
  launchBrowser,
  type LaunchOptions,
  type ProfileStore,
  type TargetEvent,
  TargetTracker,
  type TrackedTarget,
} from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";
import type { BrowserHooks, LaunchExtras, TargetWatcher } from "./hooks.ts";
import type { Admission } from "./admission.ts";
import { admitWorker } from "./worker_cap.ts";
import type { Live } from "./live.ts";
import type { LaunchGroup, LaunchGroups } from "./launch_group.ts";
import type { Tabs } from "./tabs.ts";

/**
 * Puts a browser into a sandbox (`runtime/isolation/` implements it, `cli/` hands it in
 * through the session's options): the wrapper to run it under and its final flags.
 */
export interface LaunchIsolation {
  prepare(
    launch: { executable: string; profileDir: string; args: readonly string[] },
  ): Promise<{ wrap: NonNullable<LaunchOptions["wrap"]>; args: string[] }>;
  /**
   * Makes files the runtime chose (an upload) readable to the sandboxed browser, which sees
   * no host path but its profile: copies of them in the profile, owned by its user.
   */
  stage(profileDir: string, files: readonly string[]): Promise<string[]>;
}

/**
 * The niceness browsers run at: below the runtime, its egress proxy and the audit, so ten
 * busy renderers on two cores never make a verdict or an approval wait for the CPU.
 */
export const BROWSER_NICENESS = 10;

/** How every browser of a runtime is started, for a session or ahead of one. */
export interface BrowserStart {
  profiles: ProfileStore;
  executable: string;
  headful?: boolean;
  extraArgs?: string[];
  /** Bytes one CDP message may have (default `MAX_MESSAGE_BYTES`). */
  maxMessageBytes?: number;
  /**
   * How fast a browser's CDP bytes are read (default `CDP_BYTE_RATE`): past it the browser is
   * slowed, then ended (`SESSION_FLOODING`). `false` only in a control run.
   */
  cdpByteRate?: ByteRateLimits | false;
  /** The browser's sandbox (a network namespace of its own); none: started as before. */
  isolation?: LaunchIsolation;
  /** A cgroup per browser (memory, pids, CPU bounds); none: browsers are not bounded. */
  groups?: LaunchGroups;
  /** `nice`, to start browsers under at `BROWSER_NICENESS`; none: at the runtime's priority. */
  nice?: string;
  /** Admits launches a few at a time (one per core); none: every launch starts at once. */
  launches?: Admission;
  /** Refuses an executable that is not the pinned build, before each launch (`BrowserPin`). */
  verifyExecutable?: () => Promise<void>;
}

/** A running browser with its profile, not yet any session's. */
export interface StartedBrowser {
  browser: BrowserProcess;
  profileDir: string;
  /** Its cgroup (removed when the process exits), when browsers get one. */
  group?: LaunchGroup;
}

/** A browser started ahead of its session, with the extras its session binds. */
export interface WarmBrowser extends StartedBrowser {
  extras: LaunchExtras;
}

/** Where ready browsers come from (`WarmPool`); a miss means a launch of its own. */
export interface WarmSource {
  take(): Promise<WarmBrowser | undefined>;
}

/** What one launch needs. */
export interface LaunchDeps extends BrowserStart {
  hooks: BrowserHooks;
  /** Browsers started ahead of their session; none: every session launches its own. */
  pool?: WarmSource;
  /** The session's own followers of every target. */
  watchers: readonly TargetWatcher[];
  generation: number;
  tabs: Tabs;
  /** Where this browser's CDP layer logs (codes and names only). */
  log(line: string): void;
  /** Called once the process runs, before its first tab is adopted. */
  onStarted(live: Live): void;
  onTargetChange(live: Live, event: TargetEvent, target: TrackedTarget): void;
  /** A page's new tab was closed past `MAX_TABS` (once per notice of it). */
  onTabRefused?(): void;
}

/**
 * Starts a browser in a fresh profile with `extras` (the egress flags): in its sandbox, at
 * a lower priority, in its own cgroup, in its turn among the runtime's launches. Its profile,
 * group and extras go when the process exits, however it ends, and whoever holds it then; a
 * failed start releases them.
 */
export async function startBrowser<E extends LaunchExtras | undefined>(
  start: BrowserStart & { log(line: string): void },
  extras: () => Promise<E>,
  signal?: AbortSignal,
): Promise<StartedBrowser & { extras: E }> {
  const profileDir = await start.profiles.create();
  let made: E | undefined;
  let group: LaunchGroup | undefined;
  let browser: BrowserProcess;
  try {
    group = await start.groups?.create();
    made = await extras();
    let extraArgs = [...(start.extraArgs ?? []), ...(made?.args ?? [])];
    let wrap: LaunchOptions["wrap"];
    if (start.isolation) {
      ({ wrap, args: extraArgs } = await start.isolation.prepare({
        executable: start.executable,
        profileDir,
        args: extraArgs,
      }));
    }
    if (start.nice) {
      // Everything the browser starts inherits it: zygotes, renderers, the sandbox's helpers.
      const nice = [start.nice, "-n", String(BROWSER_NICENESS)];
      wrap = { ...wrap, command: [...nice, ...(wrap?.command ?? [])] };
    }
    if (group) {
      // Outermost: the group is entered before nice, the sandbox or the browser runs.
      wrap = { ...wrap, command: [...group.wrap, ...(wrap?.command ?? [])] };
      if (group.env) wrap.env = { ...wrap.env, ...group.env };
    }
    const launch = async () => {
      // Called off while it waited for its turn: no browser is started at all.
      signal?.throwIfAborted();
      await start.verifyExecutable?.();
      return await launchBrowser({
        signal,
        executable: start.executable,
        profileDir,
        headful: start.headful,
        extraArgs,
        log: start.log,
        maxMessageBytes: start.maxMessageBytes,
        byteRate: start.cdpByteRate,
        wrap,
      });
    };
    // The start bound counts from the turn: a launch that waited is not a launch that hung.
    const running = await (start.launches ? start.launches.run(launch) : launch());
    try {
      // A group someone else made (systemd's scope) is found from the process, and checked.
      await group?.started?.(running.pid);
    } catch (err) {
      // Unbounded, or not where it was to be: the browser does not serve anyone.
      running.kill("SIGKILL");
      throw err;
    }
    browser = running;
  } catch (err) {
    made?.release();
    await start.profiles.remove(profileDir).catch(() => {});
    await group?.remove().catch(() => {});
    if (err instanceof OmotaiError) throw err;
    throw new OmotaiError("BROWSER_LAUNCH_FAILED", (err as Error).message);
  }
  browser.exited.then(async () => {
    try {
      made?.release();
    } catch (err) {
      start.log(`releasing the launch extras failed: ${describeError(err)}`);
    }
    // The profile goes with the process, however it ended.
    await start.profiles.remove(profileDir).catch((e) =>
      start.log(`could not remove a profile dir: ${describeError(e)}`)
    );
    // The group goes once its last process has (the browser's exit ends the rest); its OOM
    // count is kept for whoever asks why the browser ended.
    await group?.remove().catch((e) =>
      start.log(`could not remove a browser's cgroup: ${describeError(e)}`)
    );
  }).catch(() => {});
  return { browser, profileDir, extras: made as E, group };
}

/**
 * Ends `browser` when the kernel killed a process of its group for memory (a renderer the
 * browser would restart is not left to fill its limit again): every process of the group at
 * once where the kernel can, else the browser's first process (in its sandbox the pid
 * namespace ends the rest with it; without one, Chromium's children follow it). Resolves
 * whether it did.
 */
export async function endForMemory(browser: BrowserProcess, group: LaunchGroup): Promise<boolean> {
  if (browser.hasExited || (await group.checkOom()) === 0) return false;
  const killed = await group.kill().catch(() => false);
  if (!killed) browser.kill("SIGKILL");
  return true;
}

/**
 * A browser for a session: a warm one from the pool when its hooks can take it over (bind
 * its extras), else a launch of its own; then downloads refused, every target prepared while
 * paused, the first tab adopted.
 */
export async function launchLive(deps: LaunchDeps): Promise<Live> {
  let started: StartedBrowser | undefined;
  const warm = deps.hooks.adopt ? await deps.pool?.take() : undefined;
  if (warm && deps.hooks.adopt?.(warm.extras)) started = warm;
  // Extras these hooks cannot bind: the browser would answer to nobody; it goes.
  else warm?.browser.kill("SIGKILL");
  const { browser, profileDir, group } = started ??
    await startBrowser(deps, async () => await deps.hooks.beforeLaunch?.());
  try {
    return await deps.tabs.opening(async () => {
      // Downloads would write page-chosen bytes to disk and bypass snapshots: refused.
      await browser.connection.root.send("Browser.setDownloadBehavior", { behavior: "deny" });
      const tracker = await TargetTracker.start(browser.connection, {
        // A tab past the cap is closed before it runs, however busy the machine; a dedicated
        // worker past its cap waits paused until one ends.
        admit: (t, tracked) =>
          admitWorker(t, tracked) ?? deps.tabs.admits(t, tracked, () => deps.onTabRefused?.()),
        hook: (t) => prepare(deps, t),
      });
      const live: Live = {
        browser,
        tracker,
        generation: deps.generation,
        profileDir,
        warm: started !== undefined,
        group,
      };
      tracker.onChange((event, t) => deps.onTargetChange(live, event, t));
      deps.onStarted(live);
      await deps.tabs.adoptFirst(live);
      return live;
    });
  } catch (err) {
    // A browser that could not be set up is not left running beside the session.
    await browser.close(500).catch(() => {});
    throw err;
  }
}

function prepare(deps: LaunchDeps, t: TrackedTarget): Promise<void> {
  // Everything is sent before the tracker resumes the target (see AttachHook).
  const setup: Promise<unknown>[] = [];
  if (t.info.type === "page" || t.info.type === "iframe") {
    setup.push(
      t.session.send("Page.enable"),
      t.session.send("Page.setLifecycleEventsEnabled", { enabled: true }),
      // A page's requests never reach a service worker: one that never answers a fetch would
      // otherwise hold every later navigation to its origin, in every tab, for as long as
      // the profile lasts (the worker itself still runs, its own requests guarded). Chromium
      // applies this only with the Network domain enabled (`network_log.ts` enables it).
      t.session.send("Network.setBypassServiceWorker", { bypass: true }),
    );
  }
  try {
    for (const w of deps.watchers) setup.push(Promise.resolve(w.watch(t)));
    if (deps.hooks.prepareTarget) setup.push(deps.hooks.prepareTarget(t));
  } catch (err) {
    // A watcher or hook that throws at once is a failed setup like one that rejects, and
    // the commands already sent stay awaited (a browser killed meanwhile rejects them).
    setup.push(Promise.reject(err));
  }
  return Promise.all(setup).then(() => {});
}
