/**
 * Serializes a session's calls: each runs after every earlier one has finished, whether it
 * succeeded or not, so two tool calls never interleave on one browser.
 *
 * @module
 */

/** A FIFO of async calls. */
export class CallQueue {
  #tail: Promise<unknown> = Promise.resolve();

  /** Runs `fn` once every earlier call has settled; resolves or rejects as `fn` does. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => {});
    return run;
  }
}
