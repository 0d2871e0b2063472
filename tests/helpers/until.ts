/**
 * Polling for tests whose subject changes asynchronously (a shared board posts and decides
 * through the database): one copy, so every such test waits the same way.
 *
 * @module
 */

/** Polls `check` every 20 ms until it gives a value (not undefined or false), or throws after `ms`. */
export async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  ms = 3_000,
): Promise<T> {
  const end = Date.now() + ms;
  while (true) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((res) => setTimeout(res, 20));
  }
}
