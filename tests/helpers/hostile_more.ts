/**
 * The attacker's second pass at issue 36: more hostile pages, each meant to keep its session
 * from answering (see `MORE_HOSTILE_ROUTES` in `fixtures/hostile_site.ts`). For every case the
 * call that meets the page ends with a clear error or a bounded answer, the next navigation to
 * a healthy page of the allowed origin answers within 30 s of that call's end, and a second
 * session of the same runtime keeps answering all along. The cases and their controls run from
 * several files (`tests/hostile_more*_test.ts`), split along the pages' seams so that the
 * slowest ones (each waits out a bound of the runtime) run beside each other.
 *
 * `HOSTILE_ONLY=/a,/b` runs only those pages (cases and controls).
 *
 * @module
 */
import { keepBrowsing, navigationAfter } from "./steady_session.ts";
import assert from "node:assert/strict";
import { type CallOutcome, type Harness, refOf, startHarness, type TestClient } from "./harness.ts";
import { findBrowser, launchBrowser, openTab } from "../../cdp/mod.ts";
import { CROSS_SITE_FRAMES, type HostileSite, serveHostileSite } from "../fixtures/hostile_site.ts";

/** What the healthy page shows. */
const HEALTHY = /# Healthy page/;

/** The bound the issue sets: the next navigation answers within this of the hostile call's end. */
const NEXT_CALL_BOUND_MS = 30_000;

/** One case: the page, and how the agent meets it. */
export interface HostileCase {
  path: string;
  /** navigate: the navigation is the hostile call; click: a click on its Go button is;
   * leave: navigating away from it is. */
  meet: "navigate" | "click" | "leave";
  /** Cross-site frame servers the case needs. */
  frameHosts?: number;
  /** The query of the hostile URL, from the site. */
  query?: (site: HostileSite) => string;
  /** Policy lines past the allowed origins. */
  policy?: (site: HostileSite) => string;
  /**
   * The hostile call itself answers (no error) and shows this: a leave loads the healthy page
   * (the page's requests left behind may not hold it, `runtime/browser/left_behind.ts`).
   */
  shows?: RegExp;
  /** The page once broke the invariant (its fix named); the rest held from the start. */
  broke?: string;
}

/**
 * The cases. `broke`: the page once broke the invariant (its fix named); the rest held from
 * the start and stay as regressions. Every case runs in the suite; the slow ones (over ~15 s
 * each on a loaded machine) have files of their own (`MORE_SEAMS`).
 */
export const MORE_CASES: readonly HostileCase[] = [
  { path: "/sync-xhr", meet: "navigate", broke: "blocked after 8 s (run_delay.ts)" },
  { path: "/sync-xhr-click", meet: "click", broke: "blocked after 8 s: the click passed 60 s" },
  { path: "/sw-never", meet: "leave", broke: "requests bypass service workers" },
  {
    path: "/keepalive",
    meet: "leave",
    broke: "proxy 504 UPSTREAM_TIMEOUT, never retried; the leave ended BROWSER_TIMEOUT after " +
      "30 s until a late navigation released what was left behind (UPSTREAM_RELEASED)",
    shows: HEALTHY,
  },
  // Variants of what a page leaves behind: writes (judged first, released once sent), and
  // answers whose body never ends (nothing was released for it: the leave was not held).
  // Keepalives to other allowed sites did not hold the leave either (to one site, left for
  // that site; to six sites, 36 requests against Chromium's 32 connections per proxy): not kept.
  {
    path: "/keepalive-post",
    meet: "leave",
    policy: () => "read_only: false\n",
    shows: HEALTHY,
  },
  { path: "/keepalive-drip", meet: "leave", shows: HEALTHY },
  // Not hostile: a page whose answer is late past the release (the navigation's own request,
  // judged after it began, is never released).
  { path: "/slow", meet: "navigate", shows: /# Slow page/ },
  { path: "/hanging-fetches", meet: "leave", broke: "loads stopped before a navigation" },
  { path: "/unload-spin", meet: "leave", broke: "a silence before the scan is judged" },
  { path: "/console-flood", meet: "navigate", broke: "a silence before the scan is judged" },
  { path: "/meta-refresh", meet: "navigate" },
  { path: "/push-state", meet: "navigate" },
  { path: "/frame-tree", meet: "navigate" },
  { path: "/huge-title", meet: "navigate" },
  { path: "/chooser-loop", meet: "click" },
  { path: "/pickers", meet: "click" },
  { path: "/print-loop", meet: "navigate" },
  { path: "/dom-churn", meet: "navigate" },
  { path: "/proto-traps", meet: "navigate" },
  { path: "/ws-flood", meet: "navigate", policy: (site) => `websockets: [${site.origin}]\n` },
  { path: "/trickle", meet: "navigate" },
  { path: "/location-loop", meet: "navigate" },
  { path: "/doc-write", meet: "navigate" },
  { path: "/frameset", meet: "navigate" },
  {
    path: "/cross-sites",
    meet: "navigate",
    frameHosts: CROSS_SITE_FRAMES,
    query: (site) => `?o=${encodeURIComponent(JSON.stringify(site.frameOrigins))}`,
  },
  { path: "/huge-select", meet: "navigate" },
  { path: "/raf-thrash", meet: "navigate" },
];

const only = Deno.env.get("HOSTILE_ONLY")?.split(",");

/**
 * The pages whose cases and controls run in a file of their own, each case waiting out a bound
 * of the runtime (`hostile_more_<seam>_test.ts`); `hostile_more_test.ts` runs the rest.
 */
export const MORE_SEAMS = {
  /** A main thread blocked on a request that never answers (judged blocked after 8 s). */
  blocked: ["/sync-xhr", "/sync-xhr-click"],
  /** Pages that hold their origin or spin as they are left (the CDP timeout, the proxy's). */
  leave: ["/keepalive", "/keepalive-post", "/keepalive-drip", "/slow", "/unload-spin"],
  /** A console flood (judged stuck, its browser replaced). */
  flood: ["/console-flood"],
  /** Frame trees and documents written or replaced while they load (slow regressions). */
  frames: ["/frame-tree", "/frameset", "/cross-sites", "/doc-write"],
  /** Pages that trickle, loop their location, or churn a huge select or frames (slow regressions). */
  churn: ["/trickle", "/location-loop", "/huge-select", "/raf-thrash"],
} as const;

/** The cases and controls of `seam`; "rest": of every page no seam names. */
export function morePages(seam: keyof typeof MORE_SEAMS | "rest"): {
  cases: HostileCase[];
  controls: HostileControl[];
} {
  const split: readonly string[] = Object.values(MORE_SEAMS).flat();
  const mine = (path: string) =>
    seam === "rest"
      ? !split.includes(path)
      : (MORE_SEAMS[seam] as readonly string[]).includes(path);
  return {
    cases: MORE_CASES.filter((c) => mine(c.path)),
    controls: MORE_CONTROLS.filter((k) => mine(k.path)),
  };
}

/**
 * Registers the runtime test of `cases`: one test whose steps are the cases, in one runtime
 * with one steady session B, each case with a session A of its own (a fresh browser) that it
 * ends. What one case leaves behind (a browser ended or replaced, a hostile page's requests
 * still held by the site) can only make the next case's task harder, never pass it: every
 * case asserts its own calls (A's and B's, recorded from its own start), and A is new.
 */
export function moreCaseTests(cases: readonly HostileCase[]): void {
  const ran = cases.filter((c) => only === undefined || only.includes(c.path));
  Deno.test({
    name: `runtime: hostile pages ${
      cases.map((c) => c.path).join(" ")
    } in one runtime beside one steady session`,
    ignore: ran.length === 0,
    async fn(t) {
      const frameHosts = Math.max(0, ...ran.map((c) => c.frameHosts ?? 0));
      await using site = serveHostileSite(undefined, { frameHosts });
      const origins = [site.origin, ...site.frameOrigins].join(", ");
      // The union of the cases' policy lines: each adds what its own page needs (a page that
      // uses nothing of another's line is judged the same with it).
      const extra = ran.map((c) => c.policy?.(site) ?? "").join("");
      await using h = await startHarness(() => `allowed_origins: [${origins}]\n${extra}`);
      const b = await h.connect();
      assert.match(
        (await b.call("browser_navigate", { url: site.url("/healthy") })).text,
        /# Healthy page/,
      );
      for (const c of cases) {
        await t.step({
          name:
            `${c.path} (met by ${c.meet}) ends its call clearly or bounded; the next navigation answers within 30 s; another session keeps answering`,
          ignore: !ran.includes(c),
          // The runtime, the site and B outlive the step (the test ends them); A is the step's.
          sanitizeOps: false,
          sanitizeResources: false,
          fn: () => moreCase(c, h, b, site),
        });
      }
    },
  });
}

/** Runs case `c` in `h` with a fresh session A beside session `b`. */
async function moreCase(c: HostileCase, h: Harness, b: TestClient, site: HostileSite) {
  await using a = await h.connect();
  assert.match(
    (await a.call("browser_navigate", { url: site.url("/healthy") })).text,
    /# Healthy page/,
  );
  const url = site.url(c.path + (c.query?.(site) ?? ""));
  const other = keepBrowsing(b, site);
  let hostile: CallOutcome;
  let next: CallOutcome;
  let nextMs: number;
  let hostileEnd: number;
  const t0 = Date.now();
  try {
    if (c.meet === "navigate") hostile = await a.call("browser_navigate", { url });
    else {
      const first = await a.call("browser_navigate", { url });
      console.log(
        `  ${c.path}: first navigation ${first.isError ? "error" : "ok"} in ${
          Date.now() - t0
        } ms: ${first.text.slice(0, 200)}`,
      );
      hostile = c.meet === "click"
        ? await a.call("browser_click", { ref: refOf(first.text, /button "Go"/) })
        : await a.call("browser_navigate", { url: site.url("/healthy") });
    }
    hostileEnd = Date.now();
    console.log(
      `  ${c.path}: hostile call took ${hostileEnd - t0} ms: ${hostile.text.slice(0, 300)}`,
    );
    const after = await navigationAfter(() =>
      a.call("browser_navigate", { url: site.url("/healthy") })
    );
    next = after.next;
    nextMs = after.answerMs;
    console.log(
      `  ${c.path}: next navigation answered ${nextMs} ms after it: ${
        (after.ended ?? next).text.slice(0, 200)
      }`,
    );
  } finally {
    await other.stop();
  }
  if (hostile.isError) {
    assert.match(hostile.text, /^error: [A-Z_]+ \(/, hostile.text);
  }
  if (c.shows) {
    assert.equal(hostile.isError, false, `the call answers: ${hostile.text}`);
    assert.match(hostile.text, c.shows);
  }
  assert.doesNotMatch(hostile.text, /protocol error/);
  assert.equal(next.isError, false, next.text);
  assert.match(next.text, /# Healthy page/);
  assert.ok(nextMs < NEXT_CALL_BOUND_MS, `the next navigation answered after ${nextMs} ms`);
  const failed = other.calls.filter((x) => x.out.isError);
  assert.deepEqual(failed.map((x) => x.out.text), []);
  assert.ok(other.calls.length >= 2, `session B made ${other.calls.length} calls`);
}

/** A control (see {@link MORE_CONTROLS}). */
export interface HostileControl {
  path: string;
  leave: boolean;
  click?: boolean;
  /** The `#out` text the page shows once ready. */
  ready?: string;
  /** With the console reported, as the runtime has it (`Runtime.enable`). */
  console?: boolean;
}

/**
 * The controls: each page that broke the invariant, in a Chromium driven directly (no
 * runtime: no call watch, no proxy, no bypass, nothing stopped), where it holds the tab. `leave`:
 * the page is left for the healthy one of the same origin, which never loads; otherwise the
 * page's main thread never answers a trivial evaluation.
 */
export const MORE_CONTROLS: readonly HostileControl[] = [
  { path: "/sync-xhr", leave: false },
  { path: "/sync-xhr-click", leave: false, click: true, ready: "idle" },
  { path: "/sw-never", leave: true, ready: "installed" },
  { path: "/keepalive", leave: true },
  { path: "/hanging-fetches", leave: true },
  { path: "/unload-spin", leave: true },
  { path: "/console-flood", leave: false, console: true },
];

/** How many times the healthy step's own time a control waits for what never comes. */
const CONTROL_FACTOR = 10;
/** The least a control waits for what never comes, however fast the healthy step was. */
const CONTROL_FLOOR_MS = 4_000;

/**
 * The window in which a control's "never" is seen: {@link CONTROL_FACTOR} times what the same
 * step took on the healthy page of the same origin, timed in the same browser just before (a
 * loaded machine stretches both alike), at least {@link CONTROL_FLOOR_MS}, at most `ceilingMs`.
 * The pages hold their tab for 60 to 90 s (`HANG_MS`, `LOOP_MS`), far past any of it.
 */
export function controlWindowMs(healthyMs: number, ceilingMs: number): number {
  return Math.min(ceilingMs, Math.max(CONTROL_FLOOR_MS, Math.ceil(healthyMs * CONTROL_FACTOR)));
}

/** Registers the control test of `k`. */
export function moreControlTest(k: HostileControl): void {
  Deno.test({
    name: `control: ${k.path} holds its tab in a Chromium driven directly (${
      k.leave ? "the same origin's next page never loads" : "its main thread never answers"
    })`,
    ignore: only !== undefined && !only.includes(k.path),
    async fn() {
      await using site = serveHostileSite();
      const dir = await Deno.makeTempDir({ prefix: "omotai-hostile-control-" });
      const b = await launchBrowser({
        executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
        profileDir: dir,
      });
      try {
        const tab = await openTab(b);
        const value = (expression: string, timeoutMs = 5_000) =>
          tab.session.send("Runtime.evaluate", { expression, returnByValue: true }, { timeoutMs })
            .then((r) => r.result.value as unknown, () => undefined);
        const navigate = (path: string, timeoutMs: number) =>
          tab.session.send("Page.navigate", { url: site.url(path) }, { timeoutMs })
            .catch(() => {});
        // What the browser shows in the tab, read from the browser process (the tab's own main
        // thread may be the one held): its committed entry's URL and title. The page's session
        // is briefly "not attached" while a navigation swaps its frame: asked again then.
        const shown = async () => {
          for (let i = 0; i < 100; i++) {
            const h = await tab.session.send("Page.getNavigationHistory", {}, { timeoutMs: 5_000 })
              .catch(() => undefined);
            if (h) return h.entries[h.currentIndex];
            await new Promise((r) => setTimeout(r, 50));
          }
          return undefined;
        };
        const isHealthy = (e: { url: string; title: string } | undefined, path: string) =>
          e?.url === site.url(path) && e.title === "Healthy";
        const loaded = async (path: string) => {
          for (let i = 0; i < 1_500; i++) {
            if (isHealthy(await shown(), path)) return;
            await new Promise((r) => setTimeout(r, 20));
          }
          assert.fail(`the healthy page ${path} never loaded`);
        };
        await tab.session.send("Page.enable");
        if (k.console) await tab.session.send("Runtime.enable");
        // The healthy step, timed on the same origin in this browser: leaving a page for
        // the healthy one, or a trivial evaluation. What the hostile page holds is then
        // waited for many times as long.
        await navigate("/healthy?first", 30_000);
        await loaded("/healthy?first");
        let t = Date.now();
        await navigate("/healthy", 30_000);
        await loaded("/healthy");
        const leaveMs = Date.now() - t;
        t = Date.now();
        assert.equal(await value("0", 30_000), 0, "a trivial evaluation answers");
        const evaluateMs = Date.now() - t;
        await navigate(k.path, 5_000);
        for (let i = 0; k.ready && i < 40; i++) {
          if (await value(`document.getElementById("out")?.textContent`) === k.ready) break;
          await new Promise((r) => setTimeout(r, 250));
        }
        if (k.ready) {
          assert.equal(await value(`document.getElementById("out")?.textContent`), k.ready);
        }
        if (k.click) await value(`document.getElementById("go").click()`, 1_000);
        if (k.leave) {
          // Long enough for the page's requests to be under way, then leave it.
          await new Promise((r) => setTimeout(r, 1_500));
          const windowMs = controlWindowMs(leaveMs, 15_000);
          console.log(`  ${k.path}: healthy leave ${leaveMs} ms; waiting ${windowMs} ms`);
          await navigate("/healthy", windowMs);
          const entry = await shown();
          assert.ok(entry, "the browser answers");
          assert.ok(!isHealthy(entry, "/healthy"), `the next page never loaded: ${entry.url}`);
        } else {
          await new Promise((r) => setTimeout(r, 1_000));
          const windowMs = controlWindowMs(evaluateMs, 10_000);
          console.log(`  ${k.path}: healthy evaluation ${evaluateMs} ms; waiting ${windowMs} ms`);
          assert.equal(await value("0", windowMs), undefined, "a trivial evaluation timed out");
        }
      } finally {
        b.kill("SIGKILL");
        await b.exited;
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    },
  });
}
