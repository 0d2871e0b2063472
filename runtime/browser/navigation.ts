/**
 * Navigation and "wait until the page settles" around actions, bounded by timeouts.
 *
 * @module
 */
import type { CdpSession, Protocol } from "../../cdp/mod.ts";
import { releasingLeftBehind } from "./left_behind.ts";

/**
 * How long an action may wait for the page it started to be parsed (DOMContentLoaded);
 * after that the agent gets what is there, told the page is still loading.
 */
export const LOAD_TIMEOUT_MS = 10_000;
/** After DOMContentLoaded, how long to wait for `load` (slow images, dead third parties). */
export const LOAD_GRACE_MS = 300;
/** How long after an action we watch for a navigation it may have started. */
const NAV_GRACE_MS = 150;

/**
 * How long a navigation known to have left (a write hold judged the tab's submission) may
 * take to show as started in the tab. The judgement comes from the egress proxy and the start
 * event over the CDP pipe: on a loaded machine the event can come second. A tab that never
 * shows it is still judged not navigated (the caller fails closed).
 */
const SENT_START_WAIT_MS = 10_000;

/** The outcome of waiting for a page. */
export interface LoadOutcome {
  /** Chromium's error for a failed navigation (e.g. `net::ERR_CONNECTION_REFUSED`). */
  error?: string;
  /** The load did not finish in time; the snapshot shows what is there. */
  timedOut?: boolean;
  /** A new document was committed. */
  navigated: boolean;
}

/** Watches main-frame navigations of a page session. */
class NavigationWatch {
  #offs: (() => void)[] = [];
  #started: string[] = [];
  #loaded = new Set<string>();
  #parsed = new Set<string>();
  #stoppedAfterStart = false;
  /** The latest started navigation committed (its main response came, an error page's too). */
  #committedSinceStart = false;
  #wake: (() => void) | undefined;

  constructor(session: CdpSession, mainFrameId: string) {
    const wake = () => this.#wake?.();
    this.#offs.push(
      session.on("Page.frameStartedNavigating", (e) => {
        if (e.frameId !== mainFrameId || e.navigationType === "sameDocument") return;
        this.#started.push(e.loaderId);
        this.#stoppedAfterStart = false;
        this.#committedSinceStart = false;
        wake();
      }),
      session.on("Page.frameNavigated", (e) => {
        if (e.frame.id === mainFrameId && e.frame.parentId === undefined) {
          this.#committedSinceStart = true;
        }
      }),
      session.on("Page.lifecycleEvent", (e) => {
        if (e.frameId === mainFrameId && e.name === "load") this.#loaded.add(e.loaderId);
        if (e.frameId === mainFrameId && e.name === "DOMContentLoaded") {
          this.#parsed.add(e.loaderId);
        }
        wake();
      }),
      // Error pages, 204s and downloads never fire load, but loading still stops.
      session.on("Page.frameStoppedLoading", (e) => {
        if (e.frameId === mainFrameId && this.#started.length > 0) this.#stoppedAfterStart = true;
        wake();
      }),
      session.onDetach(wake),
    );
  }

  get startedCount(): number {
    return this.#started.length;
  }

  /**
   * A main-frame navigation started and has had no main response yet (not committed, and
   * loading did not stop): what `left_behind.ts` calls late.
   */
  get awaitingResponse(): boolean {
    return this.#started.length > 0 && !this.#committedSinceStart && !this.#stoppedAfterStart;
  }

  /** Waits until a main-frame navigation has started, or `timeoutMs` pass. */
  async untilStarted(session: CdpSession, timeoutMs: number): Promise<void> {
    await this.#until(() => this.#started.length > 0, session, timeoutMs);
  }

  #loadedOrStopped(loaderId: string | undefined): boolean {
    const id = loaderId ?? this.#started.at(-1);
    return (id !== undefined && this.#loaded.has(id)) || this.#stoppedAfterStart;
  }

  #parsedOrStopped(loaderId: string | undefined): boolean {
    const id = loaderId ?? this.#started.at(-1);
    return (id !== undefined && this.#parsed.has(id)) || this.#loadedOrStopped(loaderId);
  }

  /**
   * Waits until `loaderId` (or the latest started navigation) is parsed, then briefly for
   * `load`. Only a document that never got parsed in time counts as timed out.
   */
  async untilLoaded(
    loaderId: string | undefined,
    session: CdpSession,
    timeoutMs: number,
  ): Promise<{ timedOut: boolean }> {
    const parsed = await this.#until(() => this.#parsedOrStopped(loaderId), session, timeoutMs);
    if (!parsed) return { timedOut: !session.detached };
    await this.#until(() => this.#loadedOrStopped(loaderId), session, LOAD_GRACE_MS);
    return { timedOut: false };
  }

  async #until(done: () => boolean, session: CdpSession, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (session.detached) return false;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(200, left));
        this.#wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.#wake = undefined;
    }
    return true;
  }

  dispose(): void {
    for (const off of this.#offs) off();
  }
}

/** The main frame id of a page session. */
export async function mainFrameId(session: CdpSession): Promise<Protocol.Page.Frame> {
  const { frameTree } = await session.send("Page.getFrameTree", undefined, { timeoutMs: 5_000 });
  return frameTree.frame;
}

/** How long the browser is given to stop the page's loads before it is navigated away. */
const STOP_TIMEOUT_MS = 2_000;

/**
 * Stops the loads of the page being left (what `window.stop()` stops: its fetches and XHRs
 * too). A browser opens a few connections per host: requests that never end, left to run
 * until the next document commits, would hold every one of them, and the navigation to the
 * same host would wait behind them for a connection. Answered by the browser whatever the
 * page does; a browser that does not answer is the navigation's problem.
 */
async function releaseLoads(session: CdpSession): Promise<void> {
  await session.send("Page.stopLoading", undefined, { timeoutMs: STOP_TIMEOUT_MS })
    .catch(() => {});
}

/**
 * Navigates the page's main frame and waits for the new document to load. `mainFrameId`
 * (a page's is its target id, as in Chromium) spares asking a renderer that may be busy.
 */
export async function navigate(
  session: CdpSession,
  url: string,
  options: { timeoutMs?: number; mainFrameId?: string } = {},
): Promise<LoadOutcome> {
  const { timeoutMs = LOAD_TIMEOUT_MS } = options;
  const frameId = options.mainFrameId ?? (await mainFrameId(session)).id;
  let watch: NavigationWatch | undefined;
  // Ended without a new document (an error answer, a fragment): nothing is late then.
  let settled = false;
  // Late until its main response came; the start event itself may still be on its way.
  const late = () =>
    !settled && (watch === undefined || watch.startedCount === 0 || watch.awaitingResponse);
  return await releasingLeftBehind(session, late, async () => {
    await releaseLoads(session);
    watch = new NavigationWatch(session, frameId);
    try {
      const res = await session.send("Page.navigate", { url }, { timeoutMs });
      if (res.errorText) {
        settled = true;
        return { error: res.errorText, navigated: false };
      }
      if (!res.loaderId) {
        settled = true;
        return { navigated: false }; // same-document (fragment) navigation
      }
      const { timedOut } = await watch.untilLoaded(res.loaderId, session, timeoutMs);
      return { navigated: true, timedOut };
    } finally {
      watch.dispose();
    }
  });
}

/** Goes one entry back in history; returns undefined when there is no previous entry. */
export async function goBack(
  session: CdpSession,
  timeoutMs = LOAD_TIMEOUT_MS,
): Promise<LoadOutcome | undefined> {
  const history = await session.send("Page.getNavigationHistory");
  if (history.currentIndex <= 0) return undefined;
  const entry = history.entries[history.currentIndex - 1];
  // The blank page every tab starts on is not a page the agent visited.
  if (history.currentIndex === 1 && entry.url === "about:blank") return undefined;
  await releaseLoads(session);
  return await runAndSettle(
    session,
    () => session.send("Page.navigateToHistoryEntry", { entryId: entry.id }).then(() => {}),
    { timeoutMs },
  );
}

/** Options of {@link runAndSettle}. */
export interface SettleOptions {
  /** How long the new document may take to be parsed; default `LOAD_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** The main frame's id, when the caller has just read it (saves a round trip). */
  mainFrameId?: string;
  /**
   * Awaited with the grace period before the navigation is looked for: a form submission
   * the caller knows was sent (a busy machine may send it after the grace) then gets its
   * answer page waited for too. `true`: a top-level navigation is known to have left (a write
   * hold judged it); the tab's own start event, which reaches the runtime over the CDP pipe
   * and not with the hold's judgement, is then waited for ({@link SENT_START_WAIT_MS}).
   */
  before?: () => Promise<boolean | void>;
}

/**
 * Runs an input action and, if it started a main-frame navigation within a short grace
 * period, waits for the new document to load.
 */
export async function runAndSettle(
  session: CdpSession,
  action: () => Promise<void>,
  options: SettleOptions = {},
): Promise<LoadOutcome> {
  const { timeoutMs = LOAD_TIMEOUT_MS, before } = options;
  const frameId = options.mainFrameId ?? (await mainFrameId(session)).id;
  const watch = new NavigationWatch(session, frameId);
  try {
    // Marked before the action: a navigation it starts releases what was judged before.
    return await releasingLeftBehind(session, () => watch.awaitingResponse, async () => {
      await action();
      const [, sent] = await Promise.all([sleep(NAV_GRACE_MS), before?.()]);
      if (sent === true && watch.startedCount === 0) {
        await watch.untilStarted(session, SENT_START_WAIT_MS);
      }
      if (watch.startedCount === 0 || session.detached) return { navigated: false };
      const { timedOut } = await watch.untilLoaded(undefined, session, timeoutMs);
      return { navigated: true, timedOut };
    });
  } finally {
    watch.dispose();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** How long {@link nextFrame} waits for a frame before going on without one. */
const FRAME_WAIT_MS = 2_000;

/**
 * Resolves once the page has rendered a frame after now (its resize and scroll handlers have
 * run), in the runtime's isolated world, which the page cannot see; or after
 * `FRAME_WAIT_MS` when no frame comes (a tab that does not render).
 */
export async function nextFrame(session: CdpSession, frameId: string): Promise<void> {
  try {
    const world = await session.send("Page.createIsolatedWorld", {
      frameId,
      worldName: "omotai",
      grantUniveralAccess: false,
    });
    await session.send("Runtime.evaluate", {
      expression: "new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))",
      contextId: world.executionContextId,
      awaitPromise: true,
    }, { timeoutMs: FRAME_WAIT_MS });
  } catch {
    // No frame in time, or the page went: what is there is what the snapshot shows.
  }
}
