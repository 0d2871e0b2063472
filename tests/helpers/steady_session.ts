/**
 * A second session working beside a hostile one: it keeps calling the runtime while the
 * other session's page does its worst, and records how each call went. No page may keep
 * another session (or its own for long) from answering.
 *
 * @module
 */
import type { CallOutcome, TestClient } from "./harness.ts";
import type { HostileSite } from "../fixtures/hostile_site.ts";
import { ANSWER_BOUND_MS, until } from "./until.ts";

/** The longest a steady call may take: the brief's "answers within 30 s". */
export const STEADY_ANSWER_MS = 30_000;

/** What a steady session saw. */
export interface SteadyReport {
  calls: number;
  /** Calls that failed, or did not show the page, with their text. */
  failures: string[];
  slowestMs: number;
}

/** A running steady session; `stop()` ends its loop and reports. */
export interface SteadySession {
  stop(): Promise<SteadyReport>;
}

/** Options of {@link keepAnswering}. */
export interface KeepAnsweringOptions {
  /**
   * The rest between two snapshots (default 0: back to back). A rest spares a core the steady
   * session would otherwise spend on calls alone, and hides nothing: a call the hostile page
   * held still ends late or with an error, and a hold longer than the rest meets a call.
   */
  pauseMs?: number;
}

/**
 * Opens `url` in `client`'s session, then snapshots it again and again (resting `pauseMs`
 * between two) until stopped; each answer must come within {@link STEADY_ANSWER_MS} and show
 * `expect`.
 */
export function keepAnswering(
  client: TestClient,
  url: string,
  expect: RegExp,
  options: KeepAnsweringOptions = {},
): SteadySession {
  const pauseMs = options.pauseMs ?? 0;
  let stopped = false;
  let wake = () => {};
  const report: SteadyReport = { calls: 0, failures: [], slowestMs: 0 };
  const timed = async (name: string, args: Record<string, unknown>) => {
    const t0 = performance.now();
    const r = await client.call(name, args);
    const ms = performance.now() - t0;
    report.calls++;
    report.slowestMs = Math.max(report.slowestMs, ms);
    if (r.isError || !expect.test(r.text)) report.failures.push(r.text.slice(0, 300));
    if (ms > STEADY_ANSWER_MS) report.failures.push(`${name} took ${Math.round(ms)} ms`);
  };
  const loop = (async () => {
    await timed("browser_navigate", { url });
    while (!stopped) {
      if (pauseMs > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pauseMs);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        if (stopped) break;
      }
      await timed("browser_snapshot", {});
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake();
      await loop;
      return report;
    },
  };
}

/**
 * How long session B rests between two calls of {@link keepBrowsing}: B keeps probing the
 * runtime all through a hostile call (which runs for seconds to tens of seconds) without
 * spending a core of its own on back-to-back navigations. A call of B's that the hostile page
 * held shows all the same: it ends late, or with an error.
 */
export const KEEP_BROWSING_PAUSE_MS = 1_000;

/** Options of {@link keepBrowsing}. */
export interface KeepBrowsingOptions {
  /** The rest between two of B's calls (default {@link KEEP_BROWSING_PAUSE_MS}). */
  pauseMs?: number;
}

/**
 * Session B browsing (navigate to `site`'s `/healthy`, snapshot, each call followed by a rest
 * of `pauseMs`) until `stop`; every call is kept with when it ended, so a test can tell which
 * answered while a hostile call ran. B's first call starts at once. `stop()` lets B finish one
 * navigate and one snapshot first (waiting at most {@link ANSWER_BOUND_MS}): a hostile call
 * that ends at once must not leave B's liveness unmeasured, and a B that hangs shows as too
 * few calls; a rest under way when B is stopped is cut short.
 */
export function keepBrowsing(
  b: TestClient,
  site: Pick<HostileSite, "url">,
  options: KeepBrowsingOptions = {},
): {
  calls: { name: string; out: CallOutcome; end: number }[];
  stop(): Promise<void>;
} {
  const pauseMs = options.pauseMs ?? KEEP_BROWSING_PAUSE_MS;
  let stopped = false;
  let wake = () => {};
  const rest = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, pauseMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const calls: { name: string; out: CallOutcome; end: number }[] = [];
  const loop = (async () => {
    while (!stopped) {
      const nav = await b.call("browser_navigate", { url: site.url("/healthy") });
      calls.push({ name: "navigate", out: nav, end: Date.now() });
      if (!stopped) await rest();
      if (stopped) break;
      const snap = await b.call("browser_snapshot");
      calls.push({ name: "snapshot", out: snap, end: Date.now() });
      if (!stopped) await rest();
    }
  })();
  return {
    calls,
    async stop() {
      await until(() => calls.length >= 2, ANSWER_BOUND_MS).catch(() => {});
      stopped = true;
      wake();
      await loop;
    },
  };
}

/**
 * The runtime's own end of a browser or tab for what its page did, as a call under way hears
 * it: a flood or a memory kill the runtime judged while the call ran
 * (runtime/browser/browser_end.ts), or a tab whose renderer kept spinning, closed
 * (`PAGE_UNRESPONSIVE`, runtime/browser/call_watch.ts: 150 spinning workers still ran as the
 * tab was left, beside two hogs). Timing decides whether the hostile call or the one after it
 * meets the end; either is the session answering, and the call after the end goes on in a
 * fresh browser or tab.
 */
const PAGE_CAUSED_END = new RegExp(
  "^error: (BROWSER_LOST \\(the runtime ended this session's browser \\((SESSION_FLOODING|BROWSER_OOM|CDP_MESSAGE_TOO_LARGE):" +
    "|PAGE_UNRESPONSIVE \\(tab \\d+ stopped answering \\(a script that never yields: its renderer kept using the CPU\\); the runtime closed tab \\d+)",
);

/**
 * The navigation after a hostile call: `navigate()` once, and once more when that answer was
 * the runtime ending the browser for the hostile page ({@link PAGE_CAUSED_END}); `answerMs` is
 * how long the first answer took, `ended` that answer when it was an end.
 */
export async function navigationAfter(
  navigate: () => Promise<CallOutcome>,
): Promise<{ next: CallOutcome; answerMs: number; ended?: CallOutcome }> {
  const t0 = Date.now();
  const first = await navigate();
  const answerMs = Date.now() - t0;
  if (!first.isError || !PAGE_CAUSED_END.test(first.text)) return { next: first, answerMs };
  return { next: await navigate(), answerMs, ended: first };
}
