/**
 * A synchronous store call behind an asynchronous port: the embedded SQLite adapters answer
 * at once, and what they throw becomes the promise's rejection, as the PostgreSQL adapters'
 * errors are.
 *
 * @module
 */

/** `fn()`'s value as a promise; a throw becomes a rejection. */
export function asPromise<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}
