/**
 * Polling for tests whose subject changes asynchronously (a shared board posts and decides
 * through the database): one copy, so every such test waits the same way.
 *
 * @module
 */

/**
 * What "at once" or "in seconds" comes to in a test: the longest a test waits for an outcome
 * the product promises in seconds (an answer, a row, a notification, a process gone). The
 * suite runs on 2 cores beside CPU hogs and the rest of the suite, which stretches a quiet
 * machine's seconds many times over; the issues' bound for "the session answers" is 30 s.
 * Only a hang (a call held by a page, a dialog, a lock or a wait it should not be held by)
 * outlasts it. A test that waits for something the product does later (a 45 s silence, a
 * 120 s approval timeout) names that wait instead.
 */
export const ANSWER_BOUND_MS = 30_000;

/**
 * Polls `check` every 20 ms until it gives a value (not undefined or false), or throws after
 * `ms` (by default {@link ANSWER_BOUND_MS}: waiting longer costs only a failing test time).
 */
export async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  ms = ANSWER_BOUND_MS,
): Promise<T> {
  const end = Date.now() + ms;
  while (true) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((res) => setTimeout(res, 20));
  }
}
