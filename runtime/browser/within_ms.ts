/**
 * Waiting on work for a bounded time without abandoning it to an unhandled rejection: the
 * scan's wait on a frame's renderer, the hang recovery's wait on a tab to go.
 *
 * @module
 */

/**
 * `work`, or undefined if it has not settled within `ms` (it goes on unawaited: what it asked
 * of a silent renderer times out on its own); a rejection passes through.
 */
export async function withinMs<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) =>
    timer = setTimeout(() => resolve(undefined), ms)
  );
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
  }
}
