/**
 * What keeps a page from wedging its session: the dialogs of every tab, a watch on every
 * call (a dialog opening, a renderer that stopped answering), and the recovery: a hung or
 * dialog-looping tab is closed and the agent told where it can go on.
 *
 * @module
 */
import { describeError, type TrackedTarget } from "../../cdp/mod.ts";
import { OmotaiError } from "../errors.ts";
import { log } from "../log.ts";
import { displayUrl } from "../net/display_url.ts";
import { type CallWatch, type Interruption, watchCall } from "./call_watch.ts";
import { type DialogLoop, Dialogs, LOOP_WINDOW_MS, type OpenDialog } from "./dialogs.ts";
import type { Live } from "./live.ts";
import type { Notices } from "./notices.ts";
import type { Tabs } from "./tabs.ts";
import { readRendererCpu } from "./renderer_cpu.ts";

/** How long the browser may take to say what its renderers spent (it may be starved too). */
const CPU_READ_TIMEOUT_MS = 3_000;

/** What the guard needs from its session. */
export interface WedgeGuardDeps {
  tabs: Tabs;
  notices: Notices;
  live(): Live | undefined;
  /** Appends a lifecycle audit row (never throws). */
  lifecycle(kind: string, reason?: string): void;
  /** Whether the runtime's own scan holds the renderer right now. */
  scanning(): boolean;
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
  readonly #deps: WedgeGuardDeps;
  /** Loops being recovered from, by tab. */
  #recoveries = new Map<string, Recovery>();

  constructor(deps: WedgeGuardDeps) {
    this.#deps = deps;
    this.dialogs = new Dialogs((loop) => this.#loop(loop));
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
      currentTab: () => this.#deps.tabs.peek(this.#deps.live()),
      dialogs: this.dialogs,
      busy: () => this.#deps.scanning(),
      cpu: () => {
        const live = this.#deps.live();
        return live
          ? readRendererCpu(live.browser.connection.root, CPU_READ_TIMEOUT_MS)
          : Promise.resolve(undefined);
      },
    });
  }

  /**
   * Recovers from an unresponsive tab: closes it and says where the agent can go on, as
   * the `PAGE_UNRESPONSIVE` error the interrupted call ends with.
   */
  async recover(i: Interruption & { kind: "unresponsive" }): Promise<OmotaiError> {
    const live = this.#deps.live();
    const index = this.tabIndex(i.tabId);
    this.#deps.lifecycle(
      "page_unresponsive",
      i.why === "spinning" ? "RENDERER_SPINNING" : "RENDERER_STUCK",
    );
    // Closing can fail (the browser went meanwhile): the call still ends with what happened.
    const next = await this.#close(live, i.tabId).catch(() => "");
    return new OmotaiError(
      "PAGE_UNRESPONSIVE",
      `tab ${index} stopped answering (${
        i.why === "spinning"
          ? "a script that never yields: its renderer kept using the CPU"
          : "its renderer did not run for a long time"
      }); the runtime closed it. ${next}`,
    );
  }

  #loop({ tabId, count, reason }: DialogLoop): void {
    const index = this.tabIndex(tabId);
    this.#deps.lifecycle("dialog_loop", reason);
    const live = this.#deps.live();
    const what = reason === "DIALOG_RATE"
      ? `opened ${count} dialogs within ${LOOP_WINDOW_MS / 1000} s`
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
    const current = await this.#deps.tabs.current(live);
    const index = this.#deps.tabs.indexOf(live, current.info.targetId);
    return `Go on in tab ${index} (${displayUrl(current.info.url, undefined)}).`;
  }
}
