/**
 * A small event fan-out for the console's live view. A listener that throws is logged and
 * skipped: a broken browser tab must not stop an approval from resolving.
 *
 * @module
 */
import { log } from "../log.ts";

/** Listeners of one event type. */
export class Listeners<E> {
  readonly #listeners = new Set<(event: E) => void>();

  /** Adds `listener`; returns the function that removes it. */
  subscribe(listener: (event: E) => void): () => void {
    // A wrapper per call, so subscribing one function twice needs two unsubscribes.
    const entry = (event: E) => listener(event);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Calls every listener with `event`. */
  emit(event: E): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (err) {
        log(`approvals: a listener failed: ${(err as Error).name}`);
      }
    }
  }
}
