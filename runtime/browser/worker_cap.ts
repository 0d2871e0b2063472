/**
 * How many dedicated workers one browser runs at once. A page that starts a hundred and fifty
 * workers that spin starves its own main thread: every message to the page waits behind them,
 * so its snapshot held the agent's call half a minute on an idle machine and its next
 * navigation seconds more. The kernel shares a renderer's CPU among its threads, so the
 * runtime bounds the threads instead: past {@link MAX_RUNNING_WORKERS}, a new worker
 * stays paused where Chromium starts it (before its first line of script) and runs when one
 * that runs ends; those still waiting go with their page. A page's pool of short-lived workers
 * gets through all of them, some later; a page that keeps more than the cap alive has the rest
 * wait for as long as it stays.
 *
 * @module
 */
import type { TrackedTarget } from "../../cdp/mod.ts";

/**
 * Workers (dedicated ones, nested ones included, shared and service workers) one browser runs
 * at once, every tab's together. Pages size their pools by `navigator.hardwareConcurrency`, a
 * handful on most machines. Shared and service workers run in processes of their own, yet
 * draw on the browser's one CPU share as the page's renderer does, so they count alike (a held
 * service worker holds no request: requests bypass service workers here).
 */
export const MAX_RUNNING_WORKERS = 8;

/** The target types the cap counts and holds. */
const WORKER_TYPES = new Set(["worker", "shared_worker", "service_worker"]);

/**
 * The tracker's verdict on a new target (see `AdmitHook` in `cdp/target_tracker.ts`): a
 * worker runs while fewer than {@link MAX_RUNNING_WORKERS} are tracked and is held otherwise;
 * anything else is not this rule's to judge (undefined).
 */
export function admitWorker(
  target: TrackedTarget,
  tracked: readonly TrackedTarget[],
): true | "hold" | undefined {
  if (!WORKER_TYPES.has(target.info.type)) return undefined;
  const running = tracked.filter((t) => WORKER_TYPES.has(t.info.type)).length;
  return running < MAX_RUNNING_WORKERS ? true : "hold";
}
