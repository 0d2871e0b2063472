/**
 * Tabs whose renderer ended under them (`Inspector.targetCrashed`): out of memory, a DOM too
 * deep to lay out, a renderer the runtime killed. Chromium keeps such a tab open and attached,
 * but nothing sent to it is ever answered, a navigation included: every call on it would wait
 * out its timeout. The wedge guard closes a crashed tab at once, during a call (the call watch
 * is told) or before the next one.
 *
 * @module
 */
import type { TrackedTarget } from "../../cdp/mod.ts";
import type { TargetWatcher } from "./hooks.ts";

/** Crashed tabs of one session. */
export class Crashes implements TargetWatcher {
  readonly #crashed = new Set<string>();
  readonly #listeners = new Set<(tabId: string) => void>();

  /** Follows a page's renderer (the Inspector domain reports its crash). */
  watch(target: TrackedTarget): Promise<void> | void {
    if (target.info.type !== "page") return;
    const tabId = target.info.targetId;
    target.session.on("Inspector.targetCrashed", () => {
      this.#crashed.add(tabId);
      for (const l of [...this.#listeners]) l(tabId);
    });
    target.session.onDetach(() => this.#crashed.delete(tabId));
    return target.session.send("Inspector.enable").then(() => {});
  }

  /** Whether tab `tabId`'s renderer crashed (and the tab is still open). */
  crashed(tabId: string): boolean {
    return this.#crashed.has(tabId);
  }

  /** The open tabs whose renderer crashed. */
  all(): string[] {
    return [...this.#crashed];
  }

  /** Calls `listener` for every crash; returns the unsubscribe function. */
  onCrash(listener: (tabId: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
