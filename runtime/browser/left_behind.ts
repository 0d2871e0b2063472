/**
 * Requests a tab's earlier documents left behind, and the navigation they must not hold. A
 * browser opens a few connections per host (six): keepalive fetches outlive their page
 * (Chromium moves them to its browser process, and stopping the page's loads before a
 * navigation does not cancel them), and requests that never end hold every connection to
 * their host until the egress proxy's answer bound (30 s), the navigation's own request
 * queued inside the browser behind them, never even reaching the proxy.
 *
 * The rule, kept here: a navigation the runtime runs in a tab (`navigation.ts`) is marked
 * before the runtime starts it; while its main response has not come, every
 * {@link LEFT_BEHIND_MS} the session's browser's requests still waiting on their upstream
 * that were judged before the mark are released by the egress proxy (answered
 * `504 UPSTREAM_RELEASED`, never retried by the browser, audited as refused). Requests judged
 * after the mark (the navigation's own, a legitimate slow answer begun since) are never
 * released; requests waiting for their judgement (a held write) are not upstream waits; other
 * sessions' browsers have listeners of their own and are never touched.
 *
 * The browser layer does not import egress: the mark comes in as a hook
 * (`BrowserHooks.markNavigation`), followed onto each of the session's tabs by
 * {@link LeftBehind}, and found by a navigation through its page session.
 *
 * @module
 */
import type { CdpSession, TrackedTarget } from "../../cdp/mod.ts";
import type { TargetWatcher } from "./hooks.ts";

/**
 * How long a navigation's main response may be late before what earlier documents left
 * behind is released. A navigation to a healthy site has its response well within it, even
 * on a loaded machine, and nothing is released then; one queued behind requests that never
 * end has none at all, and waiting longer only holds the agent's call (and past the CDP
 * timeout, 30 s, the tab is closed). Short beside `LOAD_TIMEOUT_MS` (10 s), so the navigation
 * still loads within its own bound once a connection is free.
 */
export const LEFT_BEHIND_MS = 3_000;

/** Marks a navigation's start; the function it returns releases what was judged before. */
export type MarkNavigation = () => () => void;

/** The mark of each page session whose session's hooks have one. */
const marks = new WeakMap<CdpSession, MarkNavigation>();

/** Follows every target of a session: its page session's navigations can release. */
export class LeftBehind implements TargetWatcher {
  readonly #mark: () => MarkNavigation | undefined;

  /** `mark`: the session's hook, read when a target comes (none: nothing is released). */
  constructor(mark: () => MarkNavigation | undefined) {
    this.#mark = mark;
  }

  watch(target: TrackedTarget): void {
    const mark = this.#mark();
    if (mark) marks.set(target.session, mark);
  }
}

/**
 * Runs `navigation`, which the runtime starts in `page`'s tab, marked first: every `everyMs`
 * ({@link LEFT_BEHIND_MS}) while `late()` (its main response has not come), what was judged
 * before the mark is released. Nothing when the page's session has no mark.
 */
export async function releasingLeftBehind<T>(
  page: CdpSession,
  late: () => boolean,
  navigation: () => Promise<T>,
  everyMs: number = LEFT_BEHIND_MS,
): Promise<T> {
  const release = marks.get(page)?.();
  if (!release) return await navigation();
  const timer = setInterval(() => {
    if (late() && !page.detached) release();
  }, everyMs);
  try {
    return await navigation();
  } finally {
    clearInterval(timer);
  }
}
