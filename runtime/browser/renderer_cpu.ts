/**
 * Telling a page that spins from a page that waits for the CPU. A renderer that does not
 * answer a trivial evaluation is either running a script that never yields (it burns CPU the
 * whole time it is silent) or waiting its turn on a busy machine (it burns little until it
 * gets the CPU, then answers at once). Chromium reports each of its processes' cumulative CPU
 * time (`SystemInfo.getProcessInfo`), which works the same inside a pid namespace; the call
 * watch reads it around a silence and only a renderer that spent the CPU is called spinning.
 *
 * @module
 */
import type { CdpSession } from "../../cdp/mod.ts";

/** Cumulative CPU seconds of each renderer process of one browser, by its pid. */
export type RendererCpu = ReadonlyMap<number, number>;

/**
 * CPU seconds a renderer must spend while its tab stays silent to be called spinning: an idle
 * machine gets there in as long as the silence check used to take (two probes, about 8 s); a
 * renderer that gets a fifth of a core on a loaded machine needs 25 s.
 */
export const SPIN_CPU_S = 5;
/**
 * A tab silent this long while no renderer ran at all is stuck, not starved: a starved
 * renderer gets some CPU within seconds and answers with it.
 */
export const STUCK_SILENCE_MS = 45_000;
/**
 * A tab silent this long while no renderer ran and no main thread of the browser waited for
 * the CPU is blocked (`run_delay.ts`): nothing was starved, so waiting longer changes nothing.
 */
export const BLOCKED_SILENCE_MS = 8_000;
/**
 * The share of a silence one main thread must have waited on the run queue to be starved: a
 * probe makes a starved renderer's main thread ready to run, and it waits nearly the whole
 * silence (any turn it got would have answered), while an idle thread woken now and then on a
 * loaded machine waits a small part of it.
 */
const STARVED_WAIT_SHARE = 0.25;
/** Less CPU than this over a silence is "did not run". */
const IDLE_CPU_S = 0.2;
/** A silence this long ends the wait even when the CPU could not be read at all. */
export const BLIND_SILENCE_MS = 60_000;

/** What a silence comes to. */
export type SilenceVerdict = "wait" | "spinning" | "stuck";

/** What is known of one silence: how long, over how many probes, and what the CPU did. */
export interface Silence {
  /** Milliseconds since the first unanswered probe was sent. */
  silentMs: number;
  /** Probes left unanswered in a row. */
  probes: number;
  /** CPU readings at the silence's start and now; undefined where it could not be read. */
  before: RendererCpu | undefined;
  after: RendererCpu | undefined;
  /**
   * The most run-queue delay (seconds) a main thread of the browser gathered over the
   * silence (`run_delay.ts`); undefined where it could not be read.
   */
  waited?: number;
}

/**
 * Whether a silent tab is spinning (a renderer spent `spinCpuS`, default `SPIN_CPU_S`, while
 * it was silent, over at least two probes), stuck (silent `STUCK_SILENCE_MS` and nothing ran, or silent
 * `BLOCKED_SILENCE_MS` and nothing ran or waited to run), or only slow.
 * Without readings only `BLIND_SILENCE_MS` of silence counts.
 */
export function silenceVerdict(s: Silence, spinCpuS: number = SPIN_CPU_S): SilenceVerdict {
  if (s.probes < 2) return "wait";
  if (!s.before || !s.after) return s.silentMs >= BLIND_SILENCE_MS ? "stuck" : "wait";
  const spent = cpuSpent(s.before, s.after);
  if (spent >= spinCpuS) return "spinning";
  if (spent >= IDLE_CPU_S) return "wait";
  if (s.silentMs >= STUCK_SILENCE_MS) return "stuck";
  // Nothing ran and nothing waited to run: the page is blocked, not starved.
  if (
    s.silentMs >= BLOCKED_SILENCE_MS && s.waited !== undefined &&
    s.waited * 1000 < STARVED_WAIT_SHARE * s.silentMs
  ) {
    return "stuck";
  }
  return "wait";
}

/**
 * The most CPU seconds any one renderer spent between two readings. Which renderer draws a
 * tab is not reported, so the busiest one stands for it; a renderer started in between counts
 * from zero, one that exited counts nothing.
 */
export function cpuSpent(before: RendererCpu, after: RendererCpu): number {
  let most = 0;
  for (const [pid, seconds] of after) {
    const spent = seconds - (before.get(pid) ?? 0);
    if (spent > most) most = spent;
  }
  return most;
}

/** Reads the renderers' CPU times from the browser; undefined when it does not answer. */
export async function readRendererCpu(
  root: CdpSession,
  timeoutMs: number,
): Promise<RendererCpu | undefined> {
  try {
    const { processInfo } = await root.send("SystemInfo.getProcessInfo", undefined, {
      timeoutMs,
    });
    const cpu = new Map<number, number>();
    for (const p of processInfo) {
      if (p.type === "renderer" && Number.isFinite(p.cpuTime)) cpu.set(p.id, p.cpuTime);
    }
    return cpu;
  } catch {
    // A browser too busy or gone to say: the silence is judged on its length alone.
    return undefined;
  }
}
