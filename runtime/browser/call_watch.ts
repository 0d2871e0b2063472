/**
 * Watches one tool call for what would otherwise wedge it: a dialog opening on the current
 * tab (its renderer then waits for an answer) or a renderer that stopped answering (a script
 * that never yields). A call that is interrupted returns at once with what happened.
 *
 * @module
 */
import {
  type CdpSession,
  CdpTimeoutError,
  describeError,
  type TrackedTarget,
} from "../../cdp/mod.ts";
import { log } from "../log.ts";
import type { Dialogs, OpenDialog } from "./dialogs.ts";

/** What cut a call short. */
export type Interruption =
  | { kind: "dialog"; dialog: OpenDialog }
  | { kind: "unresponsive"; tabId: string };

/** How long a call runs before the renderer is first probed. */
export const PROBE_AFTER_MS = 1_000;
/**
 * A renderer that leaves two probes in a row unanswered this long is unresponsive. Healthy
 * pages answer in a millisecond, but Chromium itself can hold a renderer for seconds (the
 * navigation after a refused download took 6 s in the attack suite): 2 × 4 s stays clear
 * of that, and a page that never yields is caught about 9 s into the call.
 */
export const PROBE_TIMEOUT_MS = 4_000;
const PROBE_EVERY_MS = 1_000;

/** A running watch. */
export interface CallWatch {
  /** Resolves on the first interruption; never rejects. */
  interrupted: Promise<Interruption>;
  dispose(): void;
}

/** What a watch needs. */
export interface CallWatchDeps {
  /** The tab the call acts on now (without opening one). */
  currentTab(): TrackedTarget | undefined;
  dialogs: Dialogs;
  /**
   * Whether the runtime itself holds the renderer (a snapshot of a huge page can keep it
   * busy for seconds): probes then wait, since they would only queue behind it.
   */
  busy(): boolean;
  probeAfterMs?: number;
  probeTimeoutMs?: number;
}

/** Starts watching; `dispose()` when the call ends. */
export function watchCall(deps: CallWatchDeps): CallWatch {
  let disposed = false;
  let resolve!: (i: Interruption) => void;
  const interrupted = new Promise<Interruption>((r) => resolve = r);
  const offDialog = deps.dialogs.onOpen((dialog) => {
    if (!disposed && dialog.tabId === deps.currentTab()?.info.targetId) {
      resolve({ kind: "dialog", dialog });
    }
  });
  const timeoutMs = deps.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Run from a timer: a throw in it would be an unhandled rejection, which ends the process.
  // A watch that fails stops probing; the call it watches goes on unwatched.
  const probeLoop = () =>
    probeOnce().catch((err) => log(`call watch failed: ${describeError(err)}`));
  const probeOnce = async () => {
    if (disposed) return;
    const tab = deps.currentTab();
    // A renderer waiting on a dialog does not answer either: that is the dialog's case.
    if (
      tab && !tab.session.detached && !deps.dialogs.openOn(tab.info.targetId) && !deps.busy()
    ) {
      const answered = await probe(tab.session, timeoutMs) ||
        (!disposed && await probe(tab.session, timeoutMs));
      if (disposed) return;
      if (
        !answered && !tab.session.detached && !deps.dialogs.openOn(tab.info.targetId) &&
        !deps.busy()
      ) {
        resolve({ kind: "unresponsive", tabId: tab.info.targetId });
        return;
      }
    }
    timer = setTimeout(probeLoop, PROBE_EVERY_MS);
  };
  timer = setTimeout(probeLoop, deps.probeAfterMs ?? PROBE_AFTER_MS);
  return {
    interrupted,
    dispose() {
      disposed = true;
      offDialog();
      clearTimeout(timer);
    },
  };
}

/** Whether the page's renderer evaluates a constant in time. */
export async function probe(
  session: CdpSession,
  timeoutMs: number = PROBE_TIMEOUT_MS,
): Promise<boolean> {
  try {
    await session.send("Runtime.evaluate", { expression: "0", returnByValue: true }, {
      timeoutMs,
    });
    return true;
  } catch (err) {
    // Only silence counts: a closed target or a refused call is not a hung renderer.
    return !(err instanceof CdpTimeoutError);
  }
}
