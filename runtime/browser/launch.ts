/**
 * Starting one browser of a session: a fresh profile, the hooks' launch flags, Chromium
 * over the pipe, downloads refused, every target prepared while paused, the first tab
 * adopted. Whatever fails on the way releases what was made before it.
 *
 * @module
 */
import {
  type BrowserProcess,
  describeError,
  launchBrowser,
  type LaunchOptions,
  type ProfileStore,
  type TargetEvent,
  TargetTracker,
  type TrackedTarget,
} from "../../cdp/mod.ts";
import { OmotaiError } from "../errors.ts";
import type { BrowserHooks, LaunchExtras, TargetWatcher } from "./hooks.ts";
import type { Live } from "./live.ts";
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

/** What one launch needs. */
export interface LaunchDeps {
  profiles: ProfileStore;
  executable: string;
  headful?: boolean;
  extraArgs?: string[];
  /** Bytes one CDP message may have (default `MAX_MESSAGE_BYTES`). */
  maxMessageBytes?: number;
  /** The browser's sandbox (a network namespace of its own); none: started as before. */
  isolation?: LaunchIsolation;
  hooks: BrowserHooks;
  /** The session's own followers of every target. */
  watchers: readonly TargetWatcher[];
  generation: number;
  tabs: Tabs;
  /** Where this browser's CDP layer logs (codes and names only). */
  log(line: string): void;
  /** Called once the process runs, before its first tab is adopted. */
  onStarted(live: Live): void;
  onTargetChange(live: Live, event: TargetEvent, target: TrackedTarget): void;
}

/** Launches a browser; its profile and the hooks' extras go when the process exits. */
export async function launchLive(deps: LaunchDeps): Promise<Live> {
  const profileDir = await deps.profiles.create();
  let extras: LaunchExtras | undefined;
  let browser: BrowserProcess;
  try {
    extras = await deps.hooks.beforeLaunch?.();
    let extraArgs = [...(deps.extraArgs ?? []), ...(extras?.args ?? [])];
    let wrap: LaunchOptions["wrap"];
    if (deps.isolation) {
      ({ wrap, args: extraArgs } = await deps.isolation.prepare({
        executable: deps.executable,
        profileDir,
        args: extraArgs,
      }));
    }
    browser = await launchBrowser({
      executable: deps.executable,
      profileDir,
      headful: deps.headful,
      extraArgs,
      log: deps.log,
      maxMessageBytes: deps.maxMessageBytes,
      wrap,
    });
  } catch (err) {
    extras?.release();
    await deps.profiles.remove(profileDir).catch(() => {});
    if (err instanceof OmotaiError) throw err;
    throw new OmotaiError("BROWSER_LAUNCH_FAILED", (err as Error).message);
  }
  browser.exited.then(async () => {
    try {
      extras?.release();
    } catch (err) {
      deps.log(`releasing the launch extras failed: ${describeError(err)}`);
    }
    // The profile goes with the process, however it ended.
    await deps.profiles.remove(profileDir).catch((e) =>
      deps.log(`could not remove a profile dir: ${describeError(e)}`)
    );
  }).catch(() => {});
  try {
    return await deps.tabs.opening(async () => {
      // Downloads would write page-chosen bytes to disk and bypass snapshots: refused.
      await browser.connection.root.send("Browser.setDownloadBehavior", { behavior: "deny" });
      const tracker = await TargetTracker.start(browser.connection, (t) => prepare(deps, t));
      const live: Live = { browser, tracker, generation: deps.generation, profileDir };
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
    );
  }
  for (const w of deps.watchers) setup.push(Promise.resolve(w.watch(t)));
  if (deps.hooks.prepareTarget) setup.push(deps.hooks.prepareTarget(t));
  return Promise.all(setup).then(() => {});
}
