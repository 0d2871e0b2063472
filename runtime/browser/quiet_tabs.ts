/**
 * The session's other tabs, held still while one of its tabs navigates. A browser opens a
 * few connections per host (six) and per proxy (32), shared by all its tabs: popups whose
 * requests never answer, each sent again as it ends, hold every one of them, and the agent's
 * navigation waits behind them for a connection until the proxy's answer deadline, again and
 * again (tests/popup_flood_test.ts). Stopping the current tab's own loads
 * (`navigation.ts`) cannot free connections another tab holds; stopping the others' loads
 * alone lets their scripts send the same requests again at once. So the other tabs are
 * frozen first (no script of theirs runs, nothing is sent again), then their loads are
 * stopped (their connections freed), and they are woken once the navigation is over: a
 * background tab that was still loading is left as far as it got, as `window.stop()` leaves
 * it.
 *
 * @module
 */
import type { CdpSession } from "../../cdp/mod.ts";

/** How long one tab is given to freeze, stop or wake (a hung renderer does not hold the rest). */
const STEP_TIMEOUT_MS = 2_000;

/**
 * Runs `fn` with every session of `others` frozen and its loads stopped, and wakes them after
 * it, however it ended. Each step is bounded and a tab that does not answer is passed over:
 * `fn` runs in every case.
 */
export async function whileOthersQuiet<T>(
  others: readonly CdpSession[],
  fn: () => Promise<T>,
): Promise<T> {
  const live = others.filter((s) => !s.detached);
  const step = (run: () => Promise<unknown>) => run().catch(() => {});
  await Promise.all(live.map((s) =>
    step(async () => {
      await s.send("Page.setWebLifecycleState", { state: "frozen" }, {
        timeoutMs: STEP_TIMEOUT_MS,
      });
      await s.send("Page.stopLoading", undefined, { timeoutMs: STEP_TIMEOUT_MS });
    })
  ));
  try {
    return await fn();
  } finally {
    // Awaited: the agent may go on in one of them at once, and a frozen page answers nothing.
    await Promise.all(
      live.filter((s) => !s.detached).map((s) =>
        step(() =>
          s.send("Page.setWebLifecycleState", { state: "active" }, { timeoutMs: STEP_TIMEOUT_MS })
        )
      ),
    );
  }
}
