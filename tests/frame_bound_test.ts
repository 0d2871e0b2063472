/**
 * The frame bound of a scan (`MAX_SCAN_FRAMES`, runtime/browser/scan_frames.ts), with real
 * Chromium: a page that frames more than the bound is read up to it, in document order, and
 * its view says that frames were left unread; a page at the bound is read whole and says
 * nothing. Same-process frames (one renderer) and out-of-process ones (a target each) both
 * count, in both scan strategies, so no kind of frame can hold a snapshot by its number.
 */
import assert from "node:assert/strict";
import { TargetTracker } from "../cdp/mod.ts";
import { scanTab, type TabScan } from "../runtime/browser/scan.ts";
import { FrameBudget, MAX_SCAN_FRAMES } from "../runtime/browser/scan_frames.ts";
import { allowAllGate } from "../runtime/gate/gate.ts";
import { navigateTool } from "../runtime/tools/navigate.ts";
import { runTool } from "../runtime/tools/pipeline.ts";
import { snapshotTool } from "../runtime/tools/snapshot.ts";
import { html, type Pages, serveTwoOrigins } from "./fixtures/two_origins.ts";
import { ANSWER_BOUND_MS } from "./helpers/harness.ts";
import { testBrowser } from "./helpers/operator_browser.ts";
import { freshCase, openSharedSession } from "./helpers/shared_session.ts";

Deno.test("FrameBudget.take: frames in order up to the bound, then none; cut once any is left", () => {
  const budget = new FrameBudget(5);
  assert.deepEqual(budget.take([1, 2, 3]), [1, 2, 3]);
  assert.equal(budget.cut, false);
  assert.equal(budget.open(), true);
  assert.deepEqual(budget.take([4, 5, 6]), [4, 5]);
  assert.equal(budget.cut, true);
  assert.equal(budget.open(), false);
  assert.deepEqual(budget.take([7]), []);
});

Deno.test("FrameBudget.open(): a session past the bound is a frame left unread", () => {
  const budget = new FrameBudget(1);
  assert.deepEqual(budget.take(["main"]), ["main"]);
  assert.equal(budget.cut, false);
  assert.equal(budget.open(), false);
  assert.equal(budget.cut, true);
});

/** `n` frames of `origin`, each naming its number (`frame 7 here`). */
function framed(n: number, origin: string): string {
  return Array.from(
    { length: n },
    (_, i) => `<iframe src="${origin}/f?i=${i}" width="20" height="20"></iframe>`,
  ).join("");
}

/** Pages of `frames` frames each (the main frame one of them), of this site or the other. */
function pages(frames: number, other: string): Pages {
  return {
    "/f": (req) => html(`<p>frame ${new URL(req.url).searchParams.get("i")} here</p>`, "F"),
    "/same": (req) => html(`<h1>Same</h1>${framed(frames - 1, new URL(req.url).origin)}`, "Same"),
    // 127.0.0.2 is another site: each of its frames is a target of its own.
    "/cross": () => html(`<h1>Cross</h1>${framed(frames - 1, other)}`, "Cross"),
  };
}

/** The frame numbers a scan read (its frames' URLs), sorted. */
function readFrames(scan: TabScan): number[] {
  return [...scan.frames.values()]
    .map((f) => new URL(f.url).searchParams.get("i"))
    .filter((i) => i !== null)
    .map(Number)
    .sort((a, b) => a - b);
}

Deno.test("scanTab: of a page's frames only the first maxFrames are read, in both strategies, and the scan says so", async (t) => {
  const BOUND = 4;
  const routes: Pages = {};
  await using site = serveTwoOrigins(() => routes);
  await using launched = await testBrowser();
  const tracker = await TargetTracker.start(launched.browser.connection, async (tr) => {
    if (tr.info.type === "page" || tr.info.type === "iframe") await tr.session.send("Page.enable");
  });
  const deadline = Date.now() + ANSWER_BOUND_MS;
  while (!tracker.targets().some((tr) => tr.info.type === "page") && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const page = tracker.targets().find((tr) => tr.info.type === "page")!.session;
  const open = async (path: string, n: number) => {
    Object.assign(routes, pages(n, site.otherOrigin));
    const loaded = page.waitFor("Page.loadEventFired", undefined, { timeoutMs: ANSWER_BOUND_MS });
    await page.send("Page.navigate", { url: `${site.origin}${path}?n=${n}` });
    // The page's load waits for every frame's.
    await loaded;
    if (path === "/cross") {
      const targets = () =>
        tracker.targets().filter((tr) => tr.info.type === "iframe" && !tr.session.detached);
      while (targets().length < n - 1 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(targets().length, n - 1, "every cross-site frame is a target");
    }
  };
  for (const [strategy, minNodes] of [["accessibility", undefined], ["dom-snapshot", 0]] as const) {
    await t.step(`${strategy}: at the bound, every frame`, async () => {
      await open("/same", BOUND);
      const scan = await scanTab(page, tracker, minNodes, BOUND);
      assert.equal(scan.mode, strategy);
      assert.deepEqual(readFrames(scan), [0, 1, 2]);
      assert.equal(scan.framesCut, false);
    });
    await t.step(
      `${strategy}: past the bound, one renderer: the first frames in order`,
      async () => {
        await open("/same", BOUND + 3);
        const scan = await scanTab(page, tracker, minNodes, BOUND);
        assert.equal(scan.mode, strategy);
        assert.deepEqual(readFrames(scan), [0, 1, 2]);
        assert.equal(scan.framesCut, true);
      },
    );
    await t.step(`${strategy}: past the bound, a target each: no more than the bound`, async () => {
      await open("/cross", BOUND + 3);
      const scan = await scanTab(page, tracker, minNodes, BOUND);
      assert.equal(scan.mode, strategy);
      // The main frame and three of the six: which three is the order their targets answer.
      assert.equal(scan.frames.size, BOUND);
      assert.equal(readFrames(scan).length, BOUND - 1);
      assert.equal(scan.framesCut, true);
    });
  }
});

Deno.test("BrowserSession.snapshot: a page past MAX_SCAN_FRAMES shows its first frames and says the rest were not read", async () => {
  await using s = await openSharedSession("omotai-frame-bound-");
  await freshCase(s, pages(MAX_SCAN_FRAMES + 1, s.site.otherOrigin));
  const { session, site } = s;
  const nav = await runTool(navigateTool, { url: `${site.origin}/same` }, {
    session,
    gate: allowAllGate,
  });
  assert.notEqual(nav.isError, true);
  // One page of the view holds every line.
  const r = await runTool(snapshotTool, { max_tokens: 100_000 }, { session, gate: allowAllGate });
  const text = r.content.map((c) => ("text" in c ? c.text : "") ?? "").join("\n");
  assert.notEqual(r.isError, true, text.slice(0, 2_000));
  const shown = [...text.matchAll(/frame (\d+) here/g)].map((m) => Number(m[1]));
  assert.deepEqual(shown, Array.from({ length: MAX_SCAN_FRAMES - 1 }, (_, i) => i));
  assert.match(text, new RegExp(`frames past the first ${MAX_SCAN_FRAMES} not read`));
});
