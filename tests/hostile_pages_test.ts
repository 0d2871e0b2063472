/**
 * Recovery from any hang, in bounded time (issue 36, item 2). Each hostile page of
 * `fixtures/hostile_site.ts` once wedged its session for good; now the call that meets it
 * ends with a clear error (or a bounded answer), and the next navigation to a healthy page
 * of an allowed origin answers within 30 s of that call's end, while a second session of the
 * same runtime keeps browsing. Each page has a control: the same page in a Chromium driven
 * directly (no runtime, no recovery), where it is shown to be hostile.
 */
import { KEEP_BROWSING_PAUSE_MS, keepBrowsing, navigationAfter } from "./helpers/steady_session.ts";
import { busyMachine } from "./helpers/cpu_hogs.ts";
import assert from "node:assert/strict";
import { type BrowserProcess, findBrowser, launchBrowser, openTab } from "../cdp/mod.ts";
import { hostPids } from "../runtime/browser/renderer_pids.ts";
import {
  type CallOutcome,
  type Harness,
  startHarness,
  type TestClient,
} from "./helpers/harness.ts";
import {
  HOSTILE_ROUTES,
  type HostileRoute,
  type HostileSite,
  serveHostileSite,
  WORKERS,
} from "./fixtures/hostile_site.ts";
import { controlWindowMs } from "./helpers/hostile_more.ts";

/** The bound the issue sets: the next navigation answers within this of the hostile call's end. */
const NEXT_CALL_BOUND_MS = 30_000;

const HOSTILE = HOSTILE_ROUTES.filter((r) => r.path !== "/healthy");

Deno.test("runtime: hostile pages in one runtime beside one steady session", async (t) => {
  // One runtime and one steady session B for every page; each page meets a session A of its
  // own (a fresh browser) that its step ends. What one page leaves behind can only make the
  // next page's task harder: each step asserts its own calls, and only the audit rows written
  // since it began.
  await using site = serveHostileSite();
  await using h = await startHarness(() => `allowed_origins: [${site.origin}]\n`);
  const b = await h.connect();
  assert.match(
    (await b.call("browser_navigate", { url: site.url("/healthy") })).text,
    /# Healthy page/,
  );
  for (const route of HOSTILE) {
    await t.step({
      name:
        `a page that ${route.does} (${route.path}) ends its call with a clear error or a bounded answer; the next navigation answers within 30 s; another session keeps answering`,
      // The runtime, the site and B outlive the step (the test ends them); A is the step's.
      sanitizeOps: false,
      sanitizeResources: false,
      fn: () => hostileCase(route, h, b, site),
    });
  }
});

async function hostileCase(route: HostileRoute, h: Harness, b: TestClient, site: HostileSite) {
  // A machine at least as busy as two CPU hogs: the issue saw these pages on a loaded machine.
  await using _hogs = await busyMachine(2);
  const seqBefore = Math.max(0, ...(await h.runtime.audit.rows()).map((r) => r.seq));
  await using a = await h.connect();
  assert.match(
    (await a.call("browser_navigate", { url: site.url("/healthy") })).text,
    /# Healthy page/,
  );
  const bStart = Date.now();
  assert.match(
    (await b.call("browser_navigate", { url: site.url("/healthy") })).text,
    /# Healthy page/,
  );
  // What one of B's calls takes on this machine now, and B's rest after it: B's rhythm, the
  // window B must answer in.
  const bCallMs = Date.now() - bStart;
  const bRhythmMs = bCallMs + KEEP_BROWSING_PAUSE_MS;
  const other = keepBrowsing(b, site);
  let hostileStart = 0;
  let hostile: CallOutcome;
  let next: CallOutcome;
  let nextMs: number;
  let hostileEnd: number;
  try {
    const t0 = hostileStart = Date.now();
    hostile = await a.call("browser_navigate", { url: site.url(route.path) });
    hostileEnd = Date.now();
    console.log(`  ${route.path}: hostile call took ${hostileEnd - t0} ms`);
    const after = await navigationAfter(() =>
      a.call("browser_navigate", { url: site.url("/healthy") })
    );
    next = after.next;
    nextMs = after.answerMs;
    console.log(`  ${route.path}: next navigation answered ${nextMs} ms after it`);
  } finally {
    await other.stop();
  }
  // A clear error says what the runtime did and where to go on; a bounded answer is the page.
  // With a cgroup, /memory meets the browser's memory limit first: the kernel's OOM kill ends
  // that browser (BROWSER_OOM) and the next call starts a fresh one.
  if (hostile.isError) {
    assert.match(
      hostile.text,
      /^error: ((BROWSER_TIMEOUT|PAGE_CRASHED|PAGE_UNRESPONSIVE) \(.*(the runtime (closed|killed) tab \d|the runtime replaced it)|BROWSER_LOST \(the runtime ended this session's browser \(BROWSER_OOM)/,
      hostile.text,
    );
  } else assert.match(hostile.text, new RegExp(`path: ${route.path}`), hostile.text);
  assert.equal(next.isError, false, next.text);
  assert.match(next.text, /# Healthy page/);
  assert.ok(nextMs < NEXT_CALL_BOUND_MS, `the next navigation answered after ${nextMs} ms`);
  // Every recovery step is audited with its reason (in this step's rows).
  const rows = (await h.runtime.audit.rows()).filter((r) => r.seq > seqBefore);
  if (hostile.isError) {
    assert.ok(
      rows.some((r) =>
        ["hang_tab_closed", "renderer_killed", "browser_replaced"].includes(r.kind) && !!r.reason
      ) || rows.some((r) => r.kind === "browser_ended" && r.reason === "BROWSER_OOM"),
      `a recovery row: ${rows.map((r) => r.kind).join(" ")}`,
    );
  }
  // Session B answered all along, some of it while A's hostile call ran.
  const failed = other.calls.filter((c) => c.out.isError);
  assert.deepEqual(failed.map((c) => c.out.text), []);
  assert.ok(other.calls.length >= 2, `session B made ${other.calls.length} calls`);
  // A hostile call that ran for over three of B's rhythms (a call and its rest) must have seen
  // B answer meanwhile; one shorter than that (a page that crashed at once) left no window to
  // stall B in.
  if (hostileEnd - hostileStart > 3 * bRhythmMs) {
    assert.ok(
      other.calls.some((c) => c.end <= hostileEnd),
      `session B answered while the hostile call ran (${hostileEnd - hostileStart} ms; ` +
        `B's call took ${bCallMs} ms, its rest ${KEEP_BROWSING_PAUSE_MS} ms)`,
    );
  }
}

/** A Chromium driven directly: no runtime, no call watch, no recovery. */
async function plainBrowser(): Promise<BrowserProcess & { dir: string }> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-hostile-control-" });
  const browser = await launchBrowser({
    executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
    profileDir: dir,
  });
  return Object.assign(browser, { dir });
}

async function endPlain(b: BrowserProcess & { dir: string }): Promise<void> {
  b.kill("SIGKILL");
  await b.exited;
  await Deno.remove(b.dir, { recursive: true }).catch(() => {});
}

/** The largest resident size (MB) of the browser's renderers, read on the host. */
async function largestRendererMb(b: BrowserProcess): Promise<number> {
  const { processInfo } = await b.connection.root.send("SystemInfo.getProcessInfo");
  const self = processInfo.find((p) => p.type === "browser");
  const renderers = processInfo.filter((p) => p.type === "renderer").map((p) => p.id);
  if (!self || b.pid === undefined) return 0;
  let most = 0;
  for (const pid of (await hostPids(b.pid, self.id, renderers)).values()) {
    const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "");
    const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    most = Math.max(most, kb / 1024);
  }
  return most;
}

Deno.test("control: /memory really grows a renderer past 1 GB and holds its main thread meanwhile", async () => {
  await using site = serveHostileSite();
  const b = await plainBrowser();
  try {
    const tab = await openTab(b);
    await tab.session.send("Page.navigate", { url: site.url("/memory") });
    let silent = 0;
    let mb = 0;
    const deadline = Date.now() + 150_000;
    while (mb < 1024 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 2_000));
      const answered = await tab.session.send("Runtime.evaluate", { expression: "0" }, {
        timeoutMs: 2_000,
      }).then(() => true, () => false);
      if (!answered) silent++;
      mb = await largestRendererMb(b);
    }
    console.log(`  /memory: a renderer holds ${Math.round(mb)} MB; ${silent} probes unanswered`);
    assert.ok(mb >= 1024, `a renderer grew to ${Math.round(mb)} MB`);
    assert.ok(silent > 0, "the page held its main thread");
  } finally {
    await endPlain(b);
  }
});

Deno.test("control: /workers holds the page's main thread or runs every worker beside it", async () => {
  // Which of the two a host sees (a main thread that stops answering while the workers
  // start, or 150 spinning threads beside a main thread that still answers) depends on its
  // cores and load; the session test below must hold either way.
  await using site = serveHostileSite();
  const b = await plainBrowser();
  try {
    const tab = await openTab(b);
    await tab.session.send("Page.navigate", { url: site.url("/workers") });
    let silent = 0;
    let started = 0;
    const deadline = Date.now() + 90_000;
    while (started < WORKERS && silent < 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1_000));
      const r = await tab.session.send("Runtime.evaluate", {
        expression: "window.workers ? window.workers.length : 0",
        returnByValue: true,
      }, { timeoutMs: 2_000 }).then((a) => Number(a.result.value), () => -1);
      if (r < 0) silent++;
      else started = r;
    }
    console.log(`  /workers: ${started} workers started; ${silent} probes unanswered`);
    assert.ok(silent >= 3 || started === WORKERS, "the page held its thread or ran every worker");
  } finally {
    await endPlain(b);
  }
});

Deno.test("control: /deep-dom crashes its renderer, after which the tab answers nothing", async () => {
  await using site = serveHostileSite();
  const b = await plainBrowser();
  try {
    const tab = await openTab(b);
    const crashed = new Promise<boolean>((r) => {
      tab.session.on("Inspector.targetCrashed", () => r(true));
      setTimeout(() => r(false), 60_000);
    });
    await tab.session.send("Inspector.enable");
    // The same evaluation on the healthy tab, timed: the crashed one is waited for many times
    // as long.
    const t = Date.now();
    await tab.session.send("Runtime.evaluate", { expression: "0" }, { timeoutMs: 30_000 });
    const windowMs = controlWindowMs(Date.now() - t, 10_000);
    await tab.session.send("Page.navigate", { url: site.url("/deep-dom") });
    assert.equal(await crashed, true, "the renderer crashed");
    const answered = await tab.session.send("Runtime.evaluate", { expression: "0" }, {
      timeoutMs: windowMs,
    }).then(() => true, () => false);
    assert.equal(answered, false, "nothing sent to the crashed tab is answered");
  } finally {
    await endPlain(b);
  }
});
