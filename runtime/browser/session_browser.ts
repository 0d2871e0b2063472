/**
 * The browser one session holds, through its lives: started on first use, restarted after a
 * crash (or after the runtime ended it over a fault) with a notice that says which, ended
 * when its cgroup counts an OOM kill, replaced when it stops answering, and gone with its
 * session. `BrowserSession` is the facade; this is where its browser comes and goes.
 *
 * @module
 */
import type { TargetEvent, TrackedTarget } from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";
import { browserLost, endOf, endText } from "./browser_end.ts";
import type { BrowserHooks, TargetWatcher } from "./hooks.ts";
import { type BrowserStart, endForMemory, launchLive, type WarmSource } from "./launch.ts";
import type { Live } from "./live.ts";
import type { Notices } from "./notices.ts";
import type { Tabs } from "./tabs.ts";

/** What a session's browser needs of its session. */
export interface SessionBrowserOptions {
  /** How its browsers start: spread into every launch. */
  start: BrowserStart & { pool?: WarmSource };
  /** The session's hooks (made after this by the session's hook factory, so asked late). */
  hooks(): BrowserHooks;
  /** The session's followers of every target; a crash watcher of this one's follows them. */
  watchers: readonly TargetWatcher[];
  tabs: Tabs;
  notices: Notices;
  /** Where a browser's CDP layer logs (codes and names only). */
  log(line: string): void;
  /** Audits a lifecycle row of the session; never throws. */
  lifecycle(kind: string, reason?: string, rule?: string): void;
  /** The session's isolation, as its `browser_started` rows say it. */
  isolation(): "netns" | "none";
  /** Whether the session has ended: no start any more, and an end is no loss to audit. */
  closed(): boolean;
  /** The generation of the browser the call under way began with, if one is under way. */
  callGeneration(): number | undefined;
}

/** Whether a browser can no longer be used: its process exited or its pipe is closed. */
export function liveGone(live: Live): boolean {
  return live.browser.hasExited || live.browser.connection.closed;
}

/** The running browser of one session, and how the next one comes. */
export class SessionBrowser {
  readonly #options: SessionBrowserOptions;
  readonly #watchers: readonly TargetWatcher[];
  #live: Live | undefined;
  #starting: Promise<Live> | undefined;
  #generation = 0;

  constructor(options: SessionBrowserOptions) {
    this.#options = options;
    this.#watchers = [
      ...options.watchers,
      // A renderer the kernel killed for memory ends the whole browser (its cgroup's count).
      { watch: (t) => this.#watchCrash(t) },
    ];
  }

  /** The browser as last started, until it is replaced or the session ends (may be gone). */
  get current(): Live | undefined {
    return this.#live;
  }

  /**
   * Starts the browser if needed; restarts it after a crash (or after the runtime ended it
   * over a fault) with a notice that says which. A browser lost during the call under way
   * fails that call (`BROWSER_LOST`) instead.
   */
  async ensureStarted(): Promise<Live> {
    if (this.#options.closed()) {
      throw new OmotaiError("SESSION_CLOSED", "this session is closed");
    }
    if (this.#live && !liveGone(this.#live)) return this.#live;
    if (this.#live) {
      const old = this.#live;
      // Whether the kernel killed it for memory: counted before the reason is told.
      await old.group?.checkOom();
      // Another call started the next browser meanwhile: that one is the session's.
      if (this.#live !== old) return await this.ensureStarted();
      const end = endOf(old);
      if (this.#options.callGeneration() === old.generation) throw browserLost(end);
      this.#live = undefined;
      // A browser whose pipe broke while it still runs is of no use to anyone.
      old.browser.kill("SIGKILL");
      this.#options.lifecycle("browser_lost", end?.code);
      this.#options.notices.push(
        end
          ? `the previous browser was ended by the runtime (${end.code}: ${
            endText(end)
          }); a fresh one was started (earlier pages and cookies are gone)`
          : "the previous browser exited; a fresh one was started (earlier pages and cookies are gone)",
      );
    }
    this.#starting ??= this.#launch().finally(() => this.#starting = undefined);
    return await this.#starting;
  }

  async #launch(): Promise<Live> {
    const generation = ++this.#generation;
    const options = this.#options;
    return await launchLive({
      ...options.start,
      hooks: options.hooks(),
      watchers: this.#watchers,
      generation,
      tabs: options.tabs,
      log: options.log,
      onStarted: (live) => {
        this.#live = live;
        // The row says whether this browser has a network of its own (`netns`) or not, and
        // (its rule) whether it was started ahead of the session (`warm`) or for it.
        options.lifecycle("browser_started", options.isolation(), live.warm ? "warm" : "cold");
        // Audited when it happens, not only at the next call: the agent may never make one.
        live.browser.connection.onClose(async () => {
          await live.group?.checkOom();
          const end = endOf(live);
          if (end && !options.closed()) options.lifecycle("browser_ended", end.code);
        });
      },
      onTargetChange: (live, event, t) => this.#onTargetChange(live, event, t),
      onTabRefused: () => options.lifecycle("tab_refused", "MAX_TABS"),
    });
  }

  #onTargetChange(live: Live, event: TargetEvent, t: TrackedTarget): void {
    if (live.generation !== this.#generation) return;
    if (event === "detached") void this.checkMemory(live);
    if (event === "failed") {
      // Closed unguarded rather than run: the audit says so (type only, never the URL).
      this.#options.lifecycle("target_setup_failed", t.info.type);
      return;
    }
    this.#options.tabs.onTargetChange(live, event, t);
  }

  /**
   * Ends `live`'s browser when its cgroup counts an OOM kill (on cgroup v1 the kernel kills
   * one process, often a renderer the browser would outlive); the connection's close audits
   * it (`browser_ended`, `BROWSER_OOM`).
   */
  async checkMemory(live: Live): Promise<void> {
    if (live.group && !liveGone(live)) await endForMemory(live.browser, live.group);
  }

  /** Checks the memory group when a page's renderer crashes (the kernel's OOM kill is one). */
  async #watchCrash(t: TrackedTarget): Promise<void> {
    if (t.info.type !== "page" || !this.#options.start.groups) return;
    // The browser's first tab is prepared before the session holds it: looked up at the crash.
    t.session.on("Inspector.targetCrashed", () => {
      if (this.#live) void this.checkMemory(this.#live);
    });
    await t.session.send("Inspector.enable");
  }

  /**
   * Whether the kernel killed a process of the running browser for memory: then that browser
   * is ended (`endForMemory`); false without a running browser or a cgroup.
   */
  async endedForMemory(): Promise<boolean> {
    const group = this.#live?.group;
    if (!group) return false;
    // The crash's own check may have ended the browser already: its count says so.
    await endForMemory(this.#live!.browser, group);
    return group.oomKills() > 0;
  }

  /**
   * Ends the browser for `reason` (it stopped answering, or a hung tab of it would not go):
   * audited as `browser_replaced`, told in a notice; the next call starts a fresh one.
   */
  replace(reason: string): void {
    const live = this.#live;
    if (!live) return;
    this.#live = undefined;
    // In its own namespace the whole tree goes with the sandbox's first process.
    live.browser.kill("SIGKILL");
    this.#options.lifecycle("browser_replaced", reason);
    this.#options.notices.push(
      `the runtime replaced this session's browser (${reason}): the next call starts a fresh one (earlier pages and cookies are gone)`,
    );
  }

  /**
   * The session's end: its browser (or the one still starting) killed and its profile
   * removed, audited `session_closed`.
   */
  async end(): Promise<void> {
    const live = this.#live ?? await this.#starting?.catch(() => undefined);
    this.#live = undefined;
    this.#options.lifecycle("session_closed");
    if (live) {
      // The profile is thrown away with the session: nothing is worth a polite close, and a
      // browser asked to close on a busy machine can take seconds. In its own namespace the
      // whole tree goes with the sandbox's first process.
      live.browser.kill("SIGKILL");
      await live.browser.exited;
      // Wait for the exit handler's profile removal.
      await this.#options.start.profiles.remove(live.browser.profileDir).catch(() => {});
    }
  }
}
