import assert from "node:assert/strict";
import { TargetTracker } from "../cdp/mod.ts";
import { CHAIN_DIALOGS, LOOP_DIALOGS } from "../runtime/browser/dialogs.ts";
import { CHAIN_LENGTH } from "./fixtures/hostile_site.ts";
import { serveWedgeSite } from "./fixtures/wedge_site.ts";
import { busyMachine } from "./helpers/cpu_hogs.ts";
import { refOf, startHarness } from "./helpers/harness.ts";
import { testBrowser } from "./helpers/operator_browser.ts";
import { keepAnswering, type SteadyReport } from "./helpers/steady_session.ts";

/**
 * The steady session's rest between two snapshots: it still calls all through the hostile
 * session's work (about twice a second on a quiet machine; any hold of the runtime longer than
 * this meets a call), without a core of its own spent on back-to-back snapshots.
 */
const STEADY_PAUSE_MS = 500;

/**
 * A runtime serving the wedge site, the hostile session's client and a steady second one.
 * `loopWindowMs` narrows the dialog rate rule's window (default: the runtime's own).
 */
async function world(options: { loopWindowMs?: number } = {}) {
  const site = serveWedgeSite();
  const h = await startHarness(
    () => `allowed_origins: [${site.origin}]\nread_only: false\n`,
    { dialogLoopWindowMs: options.loopWindowMs },
  );
  const c = await h.connect();
  const steady = keepAnswering(await h.connect(), `${site.origin}/`, /Safe page/, {
    pauseMs: STEADY_PAUSE_MS,
  });
  let report: Promise<SteadyReport> | undefined;
  return {
    site,
    h,
    c,
    /** Stops the second session and says how it fared (once). */
    steadyReport: () => report ??= steady.stop(),
    async rows(kind: string) {
      return (await h.runtime.audit.rows()).filter((r) => r.kind === kind).map((r) => r.reason);
    },
    async [Symbol.asyncDispose]() {
      await (report ??= steady.stop());
      await h[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
    },
  };
}

function assertSteady(r: SteadyReport) {
  assert.ok(r.calls >= 2, `the second session made ${r.calls} calls`);
  assert.deepEqual(r.failures, [], `slowest ${Math.round(r.slowestMs)} ms`);
  console.log(`  second session: ${r.calls} answers, slowest ${Math.round(r.slowestMs)} ms`);
}

/**
 * The rate rule's window in the chain test's runtime. The test is of the chain rule, which
 * counts dialogs whatever their pace; at the runtime's own window (LOOP_WINDOW_MS, 30 s) an
 * agent slow enough to stay clear of the rate rule takes minutes to answer a chain. The rate
 * rule itself, at its real window, is dialogs_test.ts's and wedge_test.ts's ("within 30 s").
 * A narrow window costs nothing in what is proven: the agent's pause below is derived from it,
 * and a loaded machine only makes the agent slower.
 */
const CHAIN_TEST_WINDOW_MS = 500;

/**
 * Between two answers the agent waits long enough that no LOOP_DIALOGS dialogs open within
 * the window: only the chain rule can stop the page (a faster agent meets the rate rule). The
 * pause is a floor, so a loaded machine only makes the agent slower, never faster: LOOP_DIALOGS
 * dialogs span at least (LOOP_DIALOGS - 1) pauses, over twice the window. (Each pause is
 * time the steady session spends in calls: no longer than the rule needs.)
 */
const AGENT_PAUSE_MS = Math.ceil(CHAIN_TEST_WINDOW_MS / (LOOP_DIALOGS - 1)) + 150;

Deno.test("control: without the runtime, /chain opens all its dialogs, each after the one before is answered", async () => {
  await using hogs = await busyMachine(2);
  await using site = serveWedgeSite();
  await using chromium = await testBrowser();
  const tracker = await TargetTracker.start(
    chromium.browser.connection,
    (t) =>
      t.info.type === "page" ? t.session.send("Page.enable").then(() => {}) : Promise.resolve(),
  );
  let page = tracker.targets().find((t) => t.info.type === "page");
  for (let i = 0; !page && i < 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    page = tracker.targets().find((t) => t.info.type === "page");
  }
  assert.ok(page, "a page");
  let opened = 0;
  const done = new Promise<void>((resolve) => {
    page.session.on("Page.javascriptDialogOpening", () => {
      opened++;
      page.session.send("Page.handleJavaScriptDialog", { accept: true }).catch(() => {});
      if (opened === CHAIN_LENGTH) resolve();
    });
  });
  await page.session.send("Page.navigate", { url: `${site.origin}/chain` });
  await done;
  assert.equal(opened, CHAIN_LENGTH, `${hogs.most} hogs of its own`);
});

Deno.test("CHAIN_DIALOGS: a page chaining 1,200 dialogs, answered one by one by a slow agent, loses its tab within the bound", async () => {
  await using _hogs = await busyMachine(2);
  await using w = await world({ loopWindowMs: CHAIN_TEST_WINDOW_MS });
  let r = await w.c.call("browser_navigate", { url: `${w.site.origin}/chain` });
  let answers = 0;
  while (/dialog open: (alert|confirm)/.test(r.text) && answers < CHAIN_LENGTH) {
    await new Promise((res) => setTimeout(res, AGENT_PAUSE_MS));
    r = await w.c.call("browser_handle_dialog", { accept: true });
    answers++;
  }
  // The navigation opened the first dialog; the agent answered the next ones up to the one
  // that brought the CHAIN_DIALOGS-th, which the runtime dismissed and closed the tab for.
  assert.equal(answers, CHAIN_DIALOGS - 1, r.text.slice(0, 500));
  const after = await w.c.call("browser_tabs", { action: "list" });
  const told = `${r.text}\n${after.text}`;
  assert.match(
    told,
    new RegExp(
      `tab 0 opened ${CHAIN_DIALOGS} dialogs in a row .*the runtime closed it \\(dialog loop\\)\\. Go on in tab 0`,
    ),
    told,
  );
  // Said once: in the answer that met it (DIALOG_LOOP) or else as the next result's notice.
  assert.equal(told.match(/dialogs in a row/g)?.length, 1, told);
  assert.deepEqual(await w.rows("dialog_loop"), ["DIALOG_CHAIN"]);
  const nav = await w.c.call("browser_navigate", { url: `${w.site.origin}/` });
  assert.equal(nav.isError, false, nav.text);
  assert.match(nav.text, /# Safe page/);
  assertSteady(await w.steadyReport());
});

Deno.test("WedgeGuard.leave: browser_navigate and browser_tabs close work while a dialog is open; each dismissal audited", async () => {
  await using _hogs = await busyMachine(2);
  await using w = await world();
  const { c, site } = w;
  // A confirm the agent walks away from: dismissed (the order is kept), then the page goes.
  const home = await c.call("browser_navigate", { url: `${site.origin}/confirm` });
  const asked = await c.call("browser_click", { ref: refOf(home.text, /button "Delete order"/) });
  assert.match(asked.text, /dialog open: confirm/);
  let nav = await c.call("browser_navigate", { url: `${site.origin}/` });
  assert.equal(nav.isError, false, nav.text);
  assert.match(nav.text, /# Safe page/);
  assert.deepEqual(site.posts, []);
  // A beforeunload the navigation itself raised: navigating again means leaving (accepted).
  const ed = await c.call("browser_navigate", { url: `${site.origin}/beforeunload` });
  await c.call("browser_type", { ref: refOf(ed.text, /textbox "Draft"/), text: "draft" });
  const leave = await c.call("browser_navigate", { url: `${site.origin}/` });
  assert.match(leave.text, /dialog open: beforeunload/);
  nav = await c.call("browser_navigate", { url: `${site.origin}/` });
  assert.equal(nav.isError, false, nav.text);
  assert.match(nav.text, /# Safe page/);
  // The chain: each dismissal only brings the next dialog; the agent still gets where it asked.
  const chain = await c.call("browser_navigate", { url: `${site.origin}/chain` });
  assert.match(chain.text, /dialog open: alert/);
  nav = await c.call("browser_navigate", { url: `${site.origin}/` });
  assert.equal(nav.isError, false, nav.text);
  assert.match(nav.text, /# Safe page/);
  // Closing a tab whose page waits on a dialog: the dialog goes first, then the tab.
  const again = await c.call("browser_navigate", { url: `${site.origin}/confirm` });
  await c.call("browser_click", { ref: refOf(again.text, /button "Delete order"/) });
  const closed = await c.call("browser_tabs", { action: "close" });
  assert.equal(closed.isError, false, closed.text);
  assert.match(closed.text, /closed tab \(current\)/);
  await c.call("browser_navigate", { url: `${site.origin}/chain` });
  const closedChain = await c.call("browser_tabs", { action: "close" });
  assert.equal(closedChain.isError, false, closedChain.text);
  const list = await c.call("browser_tabs", { action: "list" });
  assert.match(list.text, /^1 tab\(s\)/m);
  assert.deepEqual(site.posts, []);
  const dismissed = await w.rows("dialog_dismissed");
  assert.deepEqual(dismissed, ["NAVIGATE", "NAVIGATE", "NAVIGATE", "TAB_CLOSED", "TAB_CLOSED"]);
  // Nothing the agent did was a loop, except what the chain did while it was left, if it did.
  for (const reason of await w.rows("dialog_loop")) {
    assert.match(String(reason), /^(DIALOG_RATE|DIALOG_UNANSWERABLE)$/);
  }
  assertSteady(await w.steadyReport());
});
