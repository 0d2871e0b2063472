/**
 * The tabs of a session's browser: which one the agent acts on, which one Chromium shows in
 * front, and which pages a page opened by itself (popups are news to the agent, once each).
 *
 * @module
 */
import type { TrackedTarget } from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";
import type { Live } from "./live.ts";
import type { Notices } from "./notices.ts";

/** A tab as the tools list it. */
export interface TabInfo {
  index: number;
  targetId: string;
  url: string;
  title: string;
  current: boolean;
}

/** The notice of the current tab closing (the wedge guard says it itself when it closed it). */
export const CURRENT_CLOSED = "the current tab closed";

/**
 * Tabs a session may have running. The headless shell has no popup blocker (the full
 * browser's blocks an opening without a user gesture), and each cross-site popup is a
 * renderer of its own: a page that opened them in a loop would spend the machine's memory,
 * every session's. A page's new tab past the cap is closed while still paused at its start
 * (see {@link Tabs.admits}): it never runs a script or sends a request.
 */
export const MAX_TABS = 16;

/** The notice of tabs closed past the cap: said once however many it closes before a result. */
const CAP_NOTICE = `a page opened more than ${MAX_TABS} tabs; the runtime closed the new ones`;

/** Tab bookkeeping of one session. */
export class Tabs {
  readonly #notices: Notices;
  #currentId: string | undefined;
  /** The tab Chromium shows in front; input to a background tab stalls until it times out. */
  #frontId: string | undefined;
  /** Tabs the runtime is crashing and closing itself (`kill`). */
  readonly #ending = new Set<string>();
  /** >0 while the runtime itself opens a tab, so that tab is not announced as a popup. */
  #opening = 0;
  /** Tabs the runtime opened itself (their attach may be announced after `#opening` drops). */
  #ownIds = new Set<string>();
  /** Pages already announced (or known to be the runtime's own). */
  #announced = new Set<string>();

  constructor(notices: Notices) {
    this.#notices = notices;
  }

  /** Page targets in the order they opened. */
  pages(live: Live | undefined): TrackedTarget[] {
    return live?.tracker.targets().filter((t) => t.info.type === "page") ?? [];
  }

  /** Runs `fn` while tabs that appear count as the runtime's own, not as popups. */
  async opening<T>(fn: () => Promise<T>): Promise<T> {
    this.#opening++;
    try {
      return await fn();
    } finally {
      this.#opening--;
    }
  }

  /**
   * Whether a new target may run (the tracker asks while it is paused): any but a page, the
   * runtime's own tabs, and a page's new tab while fewer than {@link MAX_TABS} pages are
   * tracked. Counted are the pages the tracker holds, those still in setup and those closing
   * included: the count is taken before anything of the new one runs, so however late its
   * setup finishes under load the tabs that ran never exceed the cap. Refusals are said in
   * one notice per result and reported to `onRefused` (an audit row) once per notice.
   */
  admits(
    t: TrackedTarget,
    tracked: readonly TrackedTarget[],
    onRefused?: () => void,
  ): boolean {
    if (t.info.type !== "page") return true;
    if (this.#opening > 0 || this.#ownIds.has(t.info.targetId)) return true;
    const pages = tracked.filter((p) => p.info.type === "page").length;
    if (pages < MAX_TABS) return true;
    // Said once however many it closes before the next result.
    if (!this.#notices.has(CAP_NOTICE)) {
      this.#notices.push(CAP_NOTICE);
      onRefused?.();
    }
    return false;
  }

  /** Follows the tracker: announces popups, notices the current tab closing. */
  onTargetChange(live: Live, event: string, t: TrackedTarget): void {
    if (t.info.type !== "page") return;
    if (event === "attached") this.announceNew(live);
    if (event === "detached" && t.info.targetId === this.#currentId) {
      this.#currentId = undefined;
      this.#notices.push(CURRENT_CLOSED);
    }
  }

  /** Notices pages opened by a page (popups, target=_blank): news to the agent, once each. */
  announceNew(live: Live | undefined): void {
    this.pages(live).forEach((p, index) => {
      const id = p.info.targetId;
      if (this.#announced.has(id)) return;
      this.#announced.add(id);
      const own = this.#opening > 0 || this.#ownIds.has(id);
      // The newest page is in front: input to a background tab would stall.
      this.#frontId = id;
      if (own) return;
      this.#notices.push(`a new tab opened as tab ${index}; use browser_tabs to select it`);
    });
  }

  /** Adopts the first tab of a freshly launched browser (or opens one). */
  async adoptFirst(live: Live): Promise<void> {
    this.#currentId = undefined;
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const pages = this.pages(live);
      if (pages.length > 0) {
        this.#currentId = pages[0].info.targetId;
        this.#ownIds.add(pages[0].info.targetId);
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    const { targetId } = await live.browser.connection.root.send("Target.createTarget", {
      url: "about:blank",
    });
    this.#ownIds.add(targetId);
    this.#currentId = targetId;
  }

  /** The current tab if it is still open (never opens one). */
  peek(live: Live | undefined): TrackedTarget | undefined {
    return this.pages(live).find((p) => p.info.targetId === this.#currentId);
  }

  /** The origin of the current tab's page as Chromium last reported it, if any. */
  originOf(live: Live | undefined): string | null {
    const url = this.peek(live)?.info.url;
    if (!url) return null;
    try {
      const u = new URL(url);
      return u.origin === "null" ? u.protocol : u.origin;
    } catch {
      return null;
    }
  }

  /** The index of tab `targetId`, or -1. */
  indexOf(live: Live | undefined, targetId: string): number {
    return this.pages(live).findIndex((p) => p.info.targetId === targetId);
  }

  /** The current tab; picks the newest remaining one if it closed, opens one if none. */
  async current(live: Live): Promise<TrackedTarget> {
    const pages = this.pages(live);
    const current = pages.find((p) => p.info.targetId === this.#currentId);
    if (current) return current;
    if (pages.length > 0) {
      this.#currentId = pages.at(-1)!.info.targetId;
      return pages.at(-1)!;
    }
    return await this.openFresh(live);
  }

  /** Opens a blank tab of the runtime's own and makes it current. */
  async openFresh(live: Live): Promise<TrackedTarget> {
    return await this.opening(async () => {
      const { targetId } = await live.browser.connection.root.send("Target.createTarget", {
        url: "about:blank",
      });
      this.#ownIds.add(targetId);
      this.#currentId = targetId;
      for (let i = 0; i < 100; i++) {
        const t = live.tracker.get(targetId);
        if (t) return t;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new OmotaiError("NO_TAB", "could not open a tab");
    });
  }

  /** The tabs with fresh titles and URLs (tracked infos lag behind title changes). */
  async list(live: Live): Promise<TabInfo[]> {
    const current = await this.current(live);
    const { targetInfos } = await live.browser.connection.root.send("Target.getTargets");
    const fresh = new Map(targetInfos.map((i) => [i.targetId, i]));
    return this.pages(live).map((t, index) => {
      const info = fresh.get(t.info.targetId) ?? t.info;
      return {
        index,
        targetId: info.targetId,
        url: info.url,
        title: info.title,
        current: t === current,
      };
    });
  }

  /** Makes tab `index` current. */
  async select(live: Live, index: number): Promise<TrackedTarget> {
    const pages = this.pages(live);
    const t = pages[index];
    if (!t) throw noSuchTab(index, pages.length);
    this.#currentId = t.info.targetId;
    await live.browser.connection.root.send("Target.activateTarget", {
      targetId: t.info.targetId,
    }).catch(() => {});
    return t;
  }

  /** Tab `index` (the current one when omitted); `NO_SUCH_TAB` if there is none. */
  async at(live: Live, index?: number): Promise<TrackedTarget> {
    const pages = this.pages(live);
    const t = index === undefined ? await this.current(live) : pages[index];
    if (!t) throw noSuchTab(index ?? 0, pages.length);
    return t;
  }

  /** Closes `t`, waiting a bounded time for it to go. */
  async closeTarget(live: Live, t: TrackedTarget): Promise<void> {
    const detached = new Promise<void>((r) => t.session.onDetach(r));
    await live.browser.connection.root.send("Target.closeTarget", { targetId: t.info.targetId });
    await Promise.race([detached, new Promise((r) => setTimeout(r, 2_000))]);
    if (this.#currentId === t.info.targetId) this.#currentId = undefined;
    // The agent closed it itself: no notice about it.
    this.#notices.drop(CURRENT_CLOSED);
  }

  /**
   * Ends a tab whose page will not let go (a script that never yields, dialogs in a loop):
   * its renderer is crashed from the IO thread, which answers whatever the main thread
   * does, then the tab is closed.
   */
  async kill(live: Live, t: TrackedTarget): Promise<void> {
    // Its crash is the runtime's doing: a call watching the tab is not told of it (`ending`).
    this.#ending.add(t.info.targetId);
    t.session.onDetach(() => this.#ending.delete(t.info.targetId));
    t.session.send("Page.crash", undefined, { timeoutMs: 2_000 }).catch(() => {});
    await this.closeTarget(live, t);
  }

  /** Whether the runtime is ending tab `tabId` itself (`kill`), until it is gone. */
  ending(tabId: string): boolean {
    return this.#ending.has(tabId);
  }

  /** Brings `tab` to the front before input is sent to it. */
  async bringToFront(tab: TrackedTarget): Promise<void> {
    if (this.#frontId === tab.info.targetId) return;
    await tab.session.send("Page.bringToFront").catch(() => {});
    this.#frontId = tab.info.targetId;
  }
}

function noSuchTab(index: number, open: number): OmotaiError {
  return new OmotaiError("NO_SUCH_TAB", `there is no tab ${index} (${open} open)`);
}
