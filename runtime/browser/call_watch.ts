/**
 * Watches one tool call for what would otherwise wedge it: a dialog opening on the current
 * tab (its renderer then waits for an answer), a renderer that crashed under it (nothing sent
 * to the tab is answered after) or a renderer that stopped answering because a script never
 * yields. Silence alone is not enough: on a busy machine a healthy renderer
 * waits for the CPU too, so a silent tab is called unresponsive only when a renderer spent
 * the CPU while it was silent (or nothing ran at all for long; see `renderer_cpu.ts`). A
 * call that is interrupted returns at once with what happened.
 *
 * @module
 */
import {
  type CdpSession,
  CdpTimeoutError,
  describeError,
  type TrackedTarget,
} from "../../cdp/mod.ts";
import { log } from "../mod.ts";
import type { Crashes } from "./crashes.ts";
import type { Dialogs, OpenDialog } from "./dialogs.ts";
import { type RendererCpu, type SilenceVerdict, silenceVerdict } from "./renderer_cpu.ts";
import { mostWaited, type RunDelays } from "./run_delay.ts";

/** What cut a call short. */
export type Interruption =
  | { kind: "dialog"; dialog: OpenDialog }
  | { kind: "crashed"; tabId: string }
  /** The current tab was caught opening dialogs in a loop: the runtime closes it. */
  | { kind: "dialog_loop"; tabId: string }
  | { kind: "unresponsive"; tabId: string; why: Exclude<SilenceVerdict, "wait"> };

/** How long a call runs before the renderer is first probed. */
export const PROBE_AFTER_MS = 1_000;
/**
 * How long one probe waits. Healthy pages answer in a millisecond, but Chromium itself can
 * hold a renderer for seconds (the navigation after a refused download took 6 s in the attack
 * suite): a silence is judged after two probes at the earliest, so a page that never yields
 * is caught about 9 s into the call on an idle machine.
 */
export const PROBE_TIMEOUT_MS = 4_000;
const PROBE_EVERY_MS = 1_000;
/** A probe not answered this soon has the renderers' CPU read, to judge a silence by. */
const SLOW_ANSWER_MS = 250;

/**
 * The bounds a watch judges a silence by (defaults: `PROBE_AFTER_MS`, `PROBE_TIMEOUT_MS`,
 * `PROBE_EVERY_MS`, `SPIN_CPU_S`). Production uses the defaults; a test of the recovery after
 * a spin narrows them so its loop burns a fraction of the CPU (no flag or policy key sets
 * them). A probe is in flight `timeout / (timeout + every)` of the time (4/5 here): a loop
 * that starts while the runtime's scan holds the renderer is judged only when one is.
 */
export interface CallWatchBounds {
  probeAfterMs?: number;
  probeTimeoutMs?: number;
  /** The pause between one probe's end and the next. */
  probeEveryMs?: number;
  /** CPU seconds a silent renderer must spend to be called spinning. */
  spinCpuS?: number;
}

/** A running watch. */
export interface CallWatch {
  /** Resolves on the first interruption; never rejects. */
  interrupted: Promise<Interruption>;
  dispose(): void;
}

/** What a watch needs. */
export interface CallWatchDeps extends CallWatchBounds {
  /** The tab the call acts on now (without opening one). */
  currentTab(): TrackedTarget | undefined;
  dialogs: Dialogs;
  /** Renderer crashes; none: a crash is not watched for. */
  crashes?: Crashes;
  /**
   * Whether the runtime itself is ending tab `tabId` (`Page.crash` before its close: leaving
   * a tab with a dialog, a loop's tab): that crash is the runtime's doing, not the page's.
   */
  ending?(tabId: string): boolean;
  /**
   * Whether the runtime itself holds the renderer (a snapshot of a huge page can keep it
   * busy for seconds): no silence starts then, since probes would only queue behind it.
   */
  busy(): boolean;
  /** The browser's renderers' CPU times; undefined when they cannot be read. */
  cpu?(): Promise<RendererCpu | undefined>;
  /** The run-queue delays of the browser's main threads; undefined when they cannot be read. */
  runDelays?(): Promise<RunDelays | undefined>;
}

/**
 * A silence in progress: since when, on which tab, how many probes, the CPU and run-queue
 * delays at its start.
 */
interface Open {
  tabId: string;
  since: number;
  probes: number;
  before: RendererCpu | undefined;
  delays: RunDelays | undefined;
}

/** Starts watching; `dispose()` when the call ends. */
export function watchCall(deps: CallWatchDeps): CallWatch {
  let disposed = false;
  let resolve!: (i: Interruption) => void;
  const interrupted = new Promise<Interruption>((r) => resolve = r);
  // Tabs whose main-frame navigation started and has not committed: such a tab may have no
  // live renderer yet (a fresh tab's first page waiting for a connection), so a probe waits
  // with nothing running and nothing waiting to run, which is not a blocked page.
  const navigating = new Set<string>();
  const followed = new Map<string, () => void>();
  const follow = (tab: TrackedTarget | undefined) => {
    const id = tab?.info.targetId;
    if (!tab || id === undefined || followed.has(id)) return;
    const s = tab.session;
    const offs = [
      s.on("Page.frameStartedNavigating", (e) => {
        if (e.frameId === id && e.navigationType !== "sameDocument") navigating.add(id);
      }),
      s.on("Page.frameNavigated", (e) => {
        if (e.frame.parentId === undefined) navigating.delete(id);
      }),
      s.on("Page.frameStoppedLoading", (e) => {
        if (e.frameId === id) navigating.delete(id);
      }),
    ];
    followed.set(id, () => offs.forEach((off) => off()));
  };
  try {
    follow(deps.currentTab());
  } catch (err) {
    log(`call watch failed: ${describeError(err)}`);
  }
  const offDialog = deps.dialogs.onOpen((dialog) => {
    if (!disposed && dialog.tabId === deps.currentTab()?.info.targetId) {
      resolve({ kind: "dialog", dialog });
    }
  });
  // A crash of the current tab's renderer, now or before the call began, ends the call.
  const crashedNow = (tabId: string) => {
    if (deps.ending?.(tabId)) return;
    if (!disposed && tabId === deps.currentTab()?.info.targetId) {
      resolve({ kind: "crashed", tabId });
    }
  };
  const offCrash = deps.crashes?.onCrash(crashedNow) ?? (() => {});
  if (deps.crashes) {
    try {
      const current = deps.currentTab()?.info.targetId;
      if (current && deps.crashes.crashed(current)) crashedNow(current);
    } catch (err) {
      // A watch that fails leaves the call unwatched, never failed.
      log(`call watch failed: ${describeError(err)}`);
    }
  }
  const offLoop = deps.dialogs.onLoop(({ tabId }) => {
    if (!disposed && tabId === deps.currentTab()?.info.targetId) {
      resolve({ kind: "dialog_loop", tabId });
    }
  });
  const timeoutMs = deps.probeTimeoutMs ?? PROBE_TIMEOUT_MS;
  const readCpu = () => deps.cpu?.() ?? Promise.resolve(undefined);
  const readDelays = () => deps.runDelays?.() ?? Promise.resolve(undefined);
  // Both readings at once: the CPU and the run queue over the same span.
  const readBoth = () => Promise.all([readCpu(), readDelays()]);
  let timer: ReturnType<typeof setTimeout> | undefined;
  let silence: Open | undefined;
  // Run from a timer: a throw in it would be an unhandled rejection, which ends the process.
  // A watch that fails stops probing; the call it watches goes on unwatched.
  const probeLoop = () =>
    probeOnce().catch((err) => log(`call watch failed: ${describeError(err)}`));
  // A renderer waiting on a dialog does not answer either: that is the dialog's case.
  const excused = (tab: TrackedTarget) =>
    tab.session.detached || deps.dialogs.openOn(tab.info.targetId) !== undefined;
  // No silence starts while the runtime's own scan holds the renderer (a probe would only
  // queue behind it), but one that began before the scan goes on being judged: that page was
  // silent already, and the scan waits on it, not it on the scan (a page spinning in its
  // unload handler or its first script once held its call for the scan's whole timeout).
  const scanHeld = () => silence === undefined && deps.busy();
  const probeOnce = async () => {
    if (disposed) return;
    const tab = deps.currentTab();
    follow(tab);
    if (!tab || excused(tab) || scanHeld()) silence = undefined;
    else {
      if (silence && silence.tabId !== tab.info.targetId) silence = undefined;
      const sentAt = Date.now();
      const answer = probe(tab.session, timeoutMs);
      // The CPU is read only around a probe that is slow to answer: a healthy page costs none.
      const before = silence ? undefined : await slowly(answer, SLOW_ANSWER_MS, readBoth);
      const answered = await answer;
      if (disposed) return;
      if (answered || excused(tab)) silence = undefined;
      else {
        silence ??= {
          tabId: tab.info.targetId,
          since: sentAt,
          probes: 0,
          before: before?.[0],
          delays: before?.[1],
        };
        silence.probes++;
        const [after, delays] = silence.probes >= 2 ? await readBoth() : [];
        const verdict = silenceVerdict({
          silentMs: Date.now() - silence.since,
          probes: silence.probes,
          before: silence.before,
          after,
          waited: silence.delays && delays && !navigating.has(tab.info.targetId)
            ? mostWaited(silence.delays, delays)
            : undefined,
        }, deps.spinCpuS);
        if (disposed) return;
        if (verdict !== "wait" && !excused(tab)) {
          log(`call watch: tab silent ${Date.now() - silence.since} ms, ${verdict}`);
          resolve({ kind: "unresponsive", tabId: tab.info.targetId, why: verdict });
          return;
        }
      }
    }
    timer = setTimeout(probeLoop, deps.probeEveryMs ?? PROBE_EVERY_MS);
  };
  timer = setTimeout(probeLoop, deps.probeAfterMs ?? PROBE_AFTER_MS);
  return {
    interrupted,
    dispose() {
      disposed = true;
      offDialog();
      offCrash();
      offLoop();
      for (const off of followed.values()) off();
      clearTimeout(timer);
    },
  };
}

/** `read()`, if `answer` has not settled within `ms`; undefined if it has. */
function slowly<T>(
  answer: Promise<unknown>,
  ms: number,
  read: () => Promise<T | undefined>,
): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const slow = new Promise<true>((r) => timer = setTimeout(() => r(true), ms));
  return Promise.race([answer.then(() => false), slow]).then((late) => {
    clearTimeout(timer);
    return late ? read() : undefined;
  });
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
