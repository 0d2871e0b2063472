/**
 * What keeps a page from wedging its session: the dialogs of every tab, a watch on every
 * call (a dialog opening, a renderer that stopped answering), and the recovery: a hung or
 * dialog-looping tab is closed and the agent told where it can go on.
 *
 * @module
 */
import { describeError } from "../../cdp/mod.ts";
import { OmotaiError } from "../errors.ts";
import { log } from "../log.ts";
import { displayUrl } from "../net/display_url.ts";
import { type CallWatch, type Interruption, watchCall } from "./call_watch.ts";
import { Dialogs, LOOP_WINDOW_MS, type OpenDialog } from "./dialogs.ts";
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

/** Dialogs, call watches and recovery of one session. */
export class WedgeGuard {
  readonly dialogs: Dialogs;
  readonly #deps: WedgeGuardDeps;

  constructor(deps: WedgeGuardDeps) {
    this.#deps = deps;
    this.dialogs = new Dialogs((tabId, count) => this.#loop(tabId, count));
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

  #loop(tabId: string, count: number): void {
    const index = this.tabIndex(tabId);
    this.#deps.lifecycle("dialog_loop", String(count));
    const live = this.#deps.live();
    // Runs beside any call: whatever fails in it must not become an unhandled rejection.
    this.#close(live, tabId).then((next) => {
      this.#deps.notices.push(
        `tab ${index} opened ${count} dialogs within ${
          LOOP_WINDOW_MS / 1000
        } s; the runtime closed it (dialog loop). ${next}`,
      );
    }).catch((err) => log(`closing a dialog-looping tab failed: ${describeError(err)}`));
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
