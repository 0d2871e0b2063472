/**
 * What keeps a page from wedging its session: the dialogs of every tab, a watch on every
 * call (a dialog opening, a renderer that stopped answering or crashed), and the recovery:
 * a hung, crashed or dialog-looping tab is closed (`hang_recovery.ts`: its renderer killed
 * if it will not go, the browser replaced if that does not answer) and the agent told what
 * the runtime did and where it can go on. A call that ended by a timeout recovers the same
 * way before it returns: no page leaves its session where every call times out.
 *
 * @module
 */
import { describeError, type TrackedTarget } from "../../cdp/mod.ts";
import { log, OmotaiError } from "../mod.ts";
import { displayUrl } from "../net/mod.ts";
import {
  type CallWatch,
  type CallWatchBounds,
  type Interruption,
  watchCall,
} from "./call_watch.ts";
import { Crashes } from "./crashes.ts";
import { type HangReason, recoverHang, type RecoveryOutcome } from "./hang_recovery.ts";
import { type DialogLoop, Dialogs, type OpenDialog } from "./dialogs.ts";
import type { Live } from "./live.ts";
import { browserLost } from "./browser_end.ts";
import type { Notices } from "./notices.ts";
import { CURRENT_CLOSED, type Tabs } from "./tabs.ts";
import { readRendererCpu } from "./renderer_cpu.ts";
import { readRunDelays } from "./run_delay.ts";

/** How long the browser may take to say what its renderers spent (it may be starved too). */
const CPU_READ_TIMEOUT_MS = 3_000;

/** What the guard needs from its session. */
export interface WedgeGuardDeps {
  tabs: Tabs;
  notices: Notices;
  live(): Live | undefined;
  /** Appends a lifecycle audit row (never throws). */
  lifecycle(kind: string, reason?: string): void;
  /** The dialog rate rule's window (default `LOOP_WINDOW_MS`; see `DialogsOptions`). */
  loopWindowMs?: number;
  /** The call watch's bounds (default: the watch's own; see `CallWatchBounds`). */
  callWatch?: CallWatchBounds;
  /** Whether the runtime's own scan holds the renderer right now. */
  scanning(): boolean;
  /** Ends the session's browser for `reason`; its next call starts a fresh one. */
  replaceBrowser(reason: string): void;
  /**
   * Whether the kernel killed a process of the browser's cgroup for memory; the browser is
   * then ended (`BROWSER_OOM`) and a crash is that end, not a tab's own.
   */
  endedForMemory(): Promise<boolean>;
}

/** Why the agent leaves a tab with a dialog open (the `dialog_dismissed` row's reason). */
export type LeaveReason = "NAVIGATE" | "TAB_CLOSED";

/** A loop's recovery under way: what to tell, and whether a call already told it. */
interface Recovery {
  told: Promise<string>;
  claimed: boolean;
}

/** Dialogs, call watches and recovery of one session. */
export class WedgeGuard {
  readonly dialogs: Dialogs;
  /** Tabs whose renderer crashed. */
  readonly crashes: Crashes = new Crashes();
  readonly #deps: WedgeGuardDeps;
  /** Loops being recovered from, by tab. */
  #recoveries = new Map<string, Recovery>();

  constructor(deps: WedgeGuardDeps) {
    this.#deps = deps;
    this.dialogs = new Dialogs((loop) => this.#loop(loop), { loopWindowMs: deps.loopWindowMs });
  }

  /**
   * The agent acted on the current tab (anything but answering a dialog): its chain of
   * dialogs starts again (see `CHAIN_DIALOGS`).
   */
  progress(): void {
    const tab = this.#deps.tabs.peek(this.#deps.live());
    if (tab) this.dialogs.progress(tab.info.targetId);
  }

  /**
   * Runs `go` on `tab` (a navigation away, its close), first answering the dialog open on it
   * if there is one (audited `dialog_dismissed` with `why`): a `beforeunload` accepted, the
   * agent asked to leave; any other dismissed. Until `go` is done the tab's further dialogs
   * are answered the same way, unseen. A page that keeps opening them as it is left (a loop
   * rule trips, or one comes that Chromium no longer lets be answered) loses the tab: it is
   * closed (audited `dialog_loop`), and with `reopen` `go` runs again in a fresh tab.
   * `said` tells the agent what happened.
   */
  async leave<T>(
    tab: TrackedTarget,
    why: LeaveReason,
    go: (tab: TrackedTarget, answered?: OpenDialog) => Promise<T>,
    options: { reopen?: boolean } = {},
  ): Promise<{ value?: T; said?: string }> {
    const tabId = tab.info.targetId;
    const open = this.dialogs.openOn(tabId);
    if (!open) return { value: await go(tab) };
    this.#deps.lifecycle("dialog_dismissed", why);
    const index = this.tabIndex(tabId);
    const leave = this.dialogs.leave(tabId);
    let reason: string;
    try {
      const ran = go(tab, open).then((value) => ({ value }));
      const out = await Promise.race([ran, leave.stuck.then((r) => ({ stuck: r }))]);
      if ("value" in out) return { value: out.value };
      // Whatever `go` still waits on goes with the tab.
      ran.catch(() => {});
      reason = out.stuck;
    } finally {
      leave.release();
    }
    this.#deps.lifecycle("dialog_loop", reason);
    const live = this.#deps.live();
    if (live) await this.#deps.tabs.kill(live, tab).catch(() => {});
    const said =
      `tab ${index} kept opening dialogs as it was left (${reason}); the runtime closed it`;
    if (!options.reopen || !live) return { said };
    const fresh = await this.#deps.tabs.openFresh(live);
    return { value: await go(fresh), said: `${said} and went on in a new tab` };
  }

  /**
   * What the call during which tab `tabId` was caught looping tells the agent: a
   * `DIALOG_LOOP` error naming the tab to go on in, once the tab is closed. The notice the
   * recovery would leave for the next result is then not left.
   */
  async loopError(tabId: string): Promise<OmotaiError> {
    const r = this.#recoveries.get(tabId);
    if (!r) {
      return new OmotaiError("DIALOG_LOOP", "the tab kept opening dialogs; the runtime closed it");
    }
    r.claimed = true;
    this.#recoveries.delete(tabId);
    const told = await r.told;
    // Already left for the next result if the tab closed before this call asked.
    this.#deps.notices.drop(told);
    return new OmotaiError("DIALOG_LOOP", told);
  }

  /** The dialog open on the current tab, if any. */
  openDialog(): OpenDialog | undefined {
    const tab = this.#deps.tabs.peek(this.#deps.live());
    return tab ? this.dialogs.openOn(tab.info.targetId) : undefined;
  }

  /** The index of the tab a dialog is open on. */
  tabIndex(tabId: string): number {
    return this.#deps.tabs.indexOf(this.#deps.live(), tabId);
  }

  /** Starts watching a call. */
  watch(): CallWatch {
    return watchCall({
      ...this.#deps.callWatch,
      currentTab: () => this.#deps.tabs.peek(this.#deps.live()),
      dialogs: this.dialogs,
      crashes: this.crashes,
      ending: (tabId) => this.#deps.tabs.ending(tabId),
      busy: () => this.#deps.scanning(),
      cpu: () => {
        const live = this.#deps.live();
        return live
          ? readRendererCpu(live.browser.connection.root, CPU_READ_TIMEOUT_MS)
          : Promise.resolve(undefined);
      },
      runDelays: () => {
        const live = this.#deps.live();
        return live
          ? readRunDelays(live.browser.connection.root, live.browser.pid, CPU_READ_TIMEOUT_MS)
          : Promise.resolve(undefined);
      },
    });
  }

  /**
   * Recovers from a tab that stopped answering or crashed during a call: closes it (see
   * `recoverHang`) and says what the runtime did and where the agent can go on, as the
   * `PAGE_UNRESPONSIVE` or `PAGE_CRASHED` error the interrupted call ends with.
   */
  async recover(
    i: Interruption & { kind: "unresponsive" | "crashed" },
  ): Promise<OmotaiError> {
    const index = this.tabIndex(i.tabId);
    if (i.kind === "crashed") {
      // A renderer the kernel killed at the browser's memory limit ends the whole browser:
      // the call fails with BROWSER_LOST naming BROWSER_OOM, and the next starts a fresh one.
      if (await this.#deps.endedForMemory().catch(() => false)) {
        return browserLost({ code: "BROWSER_OOM" });
      }
      this.#deps.lifecycle("page_crashed", "RENDERER_CRASHED");
      const did = await this.#recover(i.tabId, "RENDERER_CRASHED");
      return new OmotaiError(
        "PAGE_CRASHED",
        `tab ${index}'s page crashed (its renderer ended: out of memory, or a page too large or too deep for it); ${did}`,
      );
    }
    const reason = i.why === "spinning" ? "RENDERER_SPINNING" : "RENDERER_STUCK";
    this.#deps.lifecycle("page_unresponsive", reason);
    const did = await this.#recover(i.tabId, reason);
    return new OmotaiError(
      "PAGE_UNRESPONSIVE",
      `tab ${index} stopped answering (${
        i.why === "spinning"
          ? "a script that never yields: its renderer kept using the CPU"
          : "its page waits on something that never comes: its renderer stopped running"
      }); ${did}`,
    );
  }

  /**
   * After a call that ended by a timeout: the current tab is taken for hung and recovered
   * like an unresponsive one. Returns what the runtime did, for the call's error.
   */
  async recoverTimeout(): Promise<string> {
    const tab = this.#deps.tabs.peek(this.#deps.live());
    this.#deps.lifecycle("call_timeout", "CALL_TIMEOUT");
    return await this.#recover(tab?.info.targetId, "CALL_TIMEOUT");
  }

  /**
   * Closes every tab whose renderer crashed since the last call (a crash while no call ran),
   * with a notice each: a crashed tab answers nothing, and the next call would wait it out.
   */
  async closeCrashed(): Promise<void> {
    const open = new Set(this.#deps.tabs.pages(this.#deps.live()).map((t) => t.info.targetId));
    for (const tabId of this.crashes.all().filter((id) => open.has(id))) {
      const index = this.tabIndex(tabId);
      this.#deps.lifecycle("page_crashed", "RENDERER_CRASHED");
      const did = await this.#recover(tabId, "RENDERER_CRASHED");
      this.#deps.notices.push(`tab ${index}'s page crashed (its renderer ended); ${did}`);
    }
  }

  /**
   * Runs the recovery on `tabId` (the browser alone without one) and puts what it did into
   * words: the tab closed and where to go on, or the browser replaced.
   */
  async #recover(tabId: string | undefined, reason: HangReason): Promise<string> {
    const live = this.#deps.live();
    if (!live) return "the browser is gone; the next call starts a fresh one.";
    const tab = tabId === undefined
      ? undefined
      : this.#deps.tabs.pages(live).find((t) => t.info.targetId === tabId);
    const index = tab ? this.#deps.tabs.indexOf(live, tab.info.targetId) : -1;
    let outcome: RecoveryOutcome;
    try {
      outcome = await recoverHang(
        {
          live,
          lifecycle: this.#deps.lifecycle,
          replaceBrowser: this.#deps.replaceBrowser,
        },
        tab,
        reason,
      );
    } catch (err) {
      // Never left half done: a recovery that failed ends with the browser replaced.
      log(`hang recovery failed: ${describeError(err)}`);
      this.#deps.replaceBrowser("RECOVERY_FAILED");
      outcome = { closed: false, killed: 0, replaced: true };
    }
    if (outcome.replaced) {
      return "the browser did not recover, so the runtime replaced it: the next call starts a fresh one (earlier pages and cookies are gone).";
    }
    const what = !tab
      ? "the browser answers again."
      : outcome.killed > 0
      ? `the runtime killed tab ${index}'s renderer and closed the tab.`
      : `the runtime closed tab ${index}.`;
    // The closing of the current tab is said here, with where to go on.
    this.#deps.notices.drop(CURRENT_CLOSED);
    const next = await this.#whereNow(live).catch(() => "");
    return `${what} ${next}`.trim();
  }

  #loop({ tabId, count, reason }: DialogLoop): void {
    const index = this.tabIndex(tabId);
    this.#deps.lifecycle("dialog_loop", reason);
    const live = this.#deps.live();
    const what = reason === "DIALOG_RATE"
      ? `opened ${count} dialogs within ${this.dialogs.loopWindowMs / 1000} s`
      : `opened ${count} dialogs in a row with nothing else done between them (each answer only brought the next)`;
    const recovery: Recovery = { told: Promise.resolve(""), claimed: false };
    // Runs beside any call: whatever fails in it must not become an unhandled rejection.
    recovery.told = this.#close(live, tabId).catch((err) => {
      log(`closing a dialog-looping tab failed: ${describeError(err)}`);
      return "";
    }).then((next) => {
      const line = `tab ${index} ${what}; the runtime closed it (dialog loop). ${next}`.trim();
      if (!recovery.claimed) this.#deps.notices.push(line);
      return line;
    });
    this.#recoveries.set(tabId, recovery);
  }

  /** Closes the tab; returns where the agent is now. */
  async #close(live: Live | undefined, tabId: string): Promise<string> {
    if (!live) return "";
    const tab = this.#deps.tabs.pages(live).find((t) => t.info.targetId === tabId);
    if (tab) await this.#deps.tabs.kill(live, tab).catch(() => {});
    return await this.#whereNow(live);
  }

  /** Where the agent is now: the current tab (a fresh one if none is left). */
  async #whereNow(live: Live): Promise<string> {
    const current = await this.#deps.tabs.current(live);
    const index = this.#deps.tabs.indexOf(live, current.info.targetId);
    return `Go on in tab ${index} (${displayUrl(current.info.url, undefined)}).`;
  }
}
