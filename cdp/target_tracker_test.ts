import assert from "node:assert/strict";
import { serveFixtureSite } from "../tests/fixtures/site.ts";
import { testBrowser } from "../tests/helpers/operator_browser.ts";
import { CdpConnection, type MessageTransport } from "./connection.ts";
import { TargetTracker, type TrackedTarget } from "./target_tracker.ts";

Deno.test("TargetTracker attaches to iframes, OOPIFs, popups and every kind of worker while paused", async () => {
  await using site = serveFixtureSite();
  await using chromium = await testBrowser();
  const browser = chromium.browser;
  const seenPaused: string[] = [];
  const tracker = await TargetTracker.start(browser.connection, async (t: TrackedTarget) => {
    // The hook runs before the target is resumed: record what we were handed.
    seenPaused.push(`${t.info.type} ${t.info.url}`);
    if (t.info.type === "page" || t.info.type === "iframe") await t.session.send("Page.enable");
  });
  const waitFor = async (pred: () => boolean) => {
    const deadline = Date.now() + 10_000;
    while (!pred() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return pred();
  };
  assert.ok(await waitFor(() => tracker.targets().some((t) => t.info.type === "page")));
  const page = tracker.targets().find((t) => t.info.type === "page")!;
  await page.session.send("Page.navigate", { url: `${site.origin}/targets` });
  const types = () => tracker.targets().map((t) => t.info.type);
  assert.ok(
    await waitFor(() =>
      ["iframe", "worker", "shared_worker", "service_worker"].every((k) => types().includes(k))
    ),
    `targets: ${types().join(", ")}`,
  );
  // A popup opened by a user gesture.
  await page.session.send("Runtime.evaluate", {
    expression: "document.getElementById('pop').click()",
    userGesture: true,
  });
  assert.ok(await waitFor(() => types().filter((t) => t === "page").length === 2));
  // Target infos follow navigation (Target.targetInfoChanged).
  assert.ok(await waitFor(() => tracker.targets().some((t) => t.info.url.endsWith("/popup"))));
  const byType = (k: string) => tracker.targets().filter((t) => t.info.type === k);
  // An out-of-process frame may attach before its URL is known (Target.targetInfoChanged).
  assert.ok(await waitFor(() => byType("iframe").some((t) => t.info.url !== "")));
  assert.equal(byType("iframe").length, 1, "only the cross-site frame is out of process");
  assert.match(byType("iframe")[0].info.url, /^http:\/\/127\.0\.0\.2:\d+\/frame$/);
  assert.match(byType("worker")[0].info.url, /\/worker\.js$/);
  assert.match(byType("shared_worker")[0].info.url, /\/shared\.js$/);
  assert.match(byType("service_worker")[0].info.url, /\/sw\.js$/);
  assert.ok(byType("page").some((t) => t.info.url.endsWith("/popup")));
  // Nothing ran before the hook saw it, and internal targets are never tracked.
  for (const t of tracker.targets()) {
    assert.ok(seenPaused.some((s) => s.startsWith(t.info.type)), t.info.type);
    assert.ok(!["browser", "tab", "browser_ui"].includes(t.info.type));
  }
  // The popup really ran after being resumed.
  const popup = byType("page").find((t) => t.info.url.endsWith("/popup"))!;
  const title = await popup.session.send("Runtime.evaluate", { expression: "document.title" });
  assert.equal(title.result.value, "Popup");
  await browser.close();
});

Deno.test("TargetTracker closes a target whose setup hook fails and reports it", async () => {
  await using chromium = await testBrowser();
  const browser = chromium.browser;
  let fail = false;
  const tracker = await TargetTracker.start(browser.connection, (t) => {
    if (fail && t.info.type === "page") return Promise.reject(new Error("setup failed"));
    return Promise.resolve();
  });
  const failed: string[] = [];
  tracker.onChange((event, t) => {
    if (event === "failed") failed.push(t.info.targetId);
  });
  await new Promise((r) => setTimeout(r, 300));
  fail = true;
  const { targetId } = await browser.connection.root.send("Target.createTarget", {
    url: "about:blank",
  });
  const deadline = Date.now() + 5_000;
  let open = true;
  while (open && Date.now() < deadline) {
    const { targetInfos } = await browser.connection.root.send("Target.getTargets");
    open = targetInfos.some((t) => t.targetId === targetId);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(open, false, "the unprepared target was closed");
  assert.equal(tracker.get(targetId), undefined);
  assert.deepEqual(failed, [targetId]);
  await browser.close();
});

/** A browser stand-in behind a real connection: answers every command `{}` a tick later. */
/** A browser that answers every command; those `fails` names with a CDP error. */
function fakeBrowser(fails: (method: string) => boolean = () => false) {
  const sent: { method: string; params: Record<string, unknown>; sessionId?: string }[] = [];
  const transport: MessageTransport = {
    onmessage: () => {},
    onclose: () => {},
    send(message) {
      const m = JSON.parse(message);
      sent.push(m);
      const answer = fails(m.method)
        ? { error: { code: -32601, message: `'${m.method}' wasn't found` } }
        : { result: {} };
      queueMicrotask(() =>
        transport.onmessage(JSON.stringify({ id: m.id, ...answer, sessionId: m.sessionId }))
      );
    },
    close() {},
  };
  const logged: string[] = [];
  const connection = new CdpConnection(transport, { log: (l) => logged.push(l) });
  const attach = (targetId: string, type = "page") =>
    transport.onmessage(JSON.stringify({
      method: "Target.attachedToTarget",
      params: {
        sessionId: `s-${targetId}`,
        targetInfo: { targetId, type, title: "", url: "", attached: true },
        waitingForDebugger: true,
      },
    }));
  const detach = (targetId: string) =>
    transport.onmessage(JSON.stringify({
      method: "Target.detachedFromTarget",
      params: { sessionId: `s-${targetId}`, targetId },
    }));
  const event = (targetId: string, method: string, params: Record<string, unknown>) =>
    transport.onmessage(JSON.stringify({ method, params, sessionId: `s-${targetId}` }));
  return { connection, sent, attach, detach, event, logged };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

Deno.test("TargetTracker: a listener that throws ends its own browser's connection; another tracker goes on", async () => {
  const a = fakeBrowser();
  const b = fakeBrowser();
  const trackerA = await TargetTracker.start(a.connection);
  const trackerB = await TargetTracker.start(b.connection);
  trackerA.onChange(() => {
    throw new TypeError("injected");
  });
  const seenB: string[] = [];
  trackerB.onChange((event, t) => seenB.push(`${event} ${t.info.targetId}`));
  a.attach("p1");
  b.attach("p1");
  await settle();
  assert.equal(a.connection.fault?.code, "CDP_LISTENER_FAILED");
  assert.ok(a.logged.some((l) => l.startsWith("target listener failed: TypeError")), a.logged[0]);
  assert.equal(b.connection.closed, false);
  b.attach("p2");
  await settle();
  assert.deepEqual(seenB, ["attached p1", "attached p2"]);
  assert.deepEqual(trackerB.targets().map((t) => t.info.targetId), ["p1", "p2"]);
});

Deno.test("TargetTracker: a listener whose promise rejects ends its browser's connection too", async () => {
  const a = fakeBrowser();
  const tracker = await TargetTracker.start(a.connection);
  tracker.onChange(async () => {
    await Promise.resolve();
    throw new RangeError("injected");
  });
  a.attach("p1");
  await settle();
  assert.equal(a.connection.fault?.code, "CDP_LISTENER_FAILED");
});

Deno.test("TargetTracker: an attach hook that throws synchronously closes that target, not the browser", async () => {
  const a = fakeBrowser();
  const tracker = await TargetTracker.start(a.connection, (t) => {
    if (t.info.targetId === "bad") throw new TypeError("injected");
    return Promise.resolve();
  });
  const events: string[] = [];
  tracker.onChange((event, t) => events.push(`${event} ${t.info.targetId}`));
  a.attach("good");
  a.attach("bad");
  await settle();
  assert.equal(a.connection.closed, false);
  assert.deepEqual(events.sort(), ["attached good", "failed bad"]);
  const close = a.sent.find((m) => m.method === "Target.closeTarget");
  assert.equal(close?.params.targetId, "bad");
  assert.deepEqual(a.logged, [
    "closing a page target that failed setup: TypeError; it counts as open until it is gone",
  ]);
});

Deno.test("TargetTracker: a target the admit hook refuses is closed with its requests held and script off before it resumes, once its first request was failed; never tracked", async () => {
  const a = fakeBrowser();
  const counted: number[] = [];
  const tracker = await TargetTracker.start(a.connection, {
    refuseWaitMs: 60_000,
    // Counts what is tracked when asked: a target still in setup is already there.
    admit: (t, tracked) => {
      counted.push(tracked.length);
      return t.info.targetId !== "p3";
    },
  });
  const events: string[] = [];
  tracker.onChange((event, t) => events.push(`${event} ${t.info.targetId}`));
  a.attach("p1");
  a.attach("p2");
  a.attach("p3");
  await settle();
  assert.deepEqual(counted, [0, 1, 2]);
  assert.deepEqual(events.sort(), ["attached p1", "attached p2"]);
  assert.deepEqual(tracker.targets().map((t) => t.info.targetId), ["p1", "p2"]);
  const toP3 = () => a.sent.filter((m) => m.sessionId === "s-p3").map((m) => m.method);
  // Resumed only once nothing of it can run or leave (its opener's renderer waits with it).
  assert.deepEqual(toP3(), [
    "Fetch.enable",
    "Emulation.setScriptExecutionDisabled",
    "Runtime.runIfWaitingForDebugger",
  ]);
  // Not closed while its document request may still come: closing detaches the session, and
  // Chromium lets a request held then go on to the network.
  const closes = () => a.sent.filter((m) => m.method === "Target.closeTarget");
  assert.deepEqual(closes(), []);
  a.event("p3", "Fetch.requestPaused", { requestId: "r1", request: { url: "http://x/" } });
  await settle();
  assert.deepEqual(toP3().slice(3), ["Fetch.failRequest"]);
  const failed = a.sent.findIndex((m) => m.method === "Fetch.failRequest");
  assert.equal(a.sent[failed].params.requestId, "r1");
  assert.deepEqual(closes().map((m) => m.params.targetId), ["p3"]);
  assert.ok(a.sent.indexOf(closes()[0]) > failed, "closed only once its request was failed");
  assert.deepEqual(events.sort(), ["attached p1", "attached p2", "refused p3"]);
  assert.deepEqual(tracker.targets().map((t) => t.info.targetId), ["p1", "p2"]);
});

Deno.test("TargetTracker: a refused target that makes no request is closed after refuseWaitMs", async () => {
  const a = fakeBrowser();
  const tracker = await TargetTracker.start(a.connection, { admit: () => false, refuseWaitMs: 30 });
  const events: string[] = [];
  tracker.onChange((event, t) => events.push(`${event} ${t.info.targetId}`));
  a.attach("p1");
  await settle();
  assert.deepEqual(a.sent.filter((m) => m.method === "Target.closeTarget"), []);
  await new Promise((r) => setTimeout(r, 100));
  const close = a.sent.filter((m) => m.method === "Target.closeTarget");
  assert.deepEqual(close.map((m) => m.params.targetId), ["p1"]);
  assert.deepEqual(events, ["refused p1"]);
});

Deno.test("TargetTracker: a refused target whose setup commands fail is still closed, and no failure goes unhandled", async () => {
  // A worker's session has no Fetch domain, and any session can go before it answers.
  const a = fakeBrowser((m) =>
    m === "Fetch.enable" || m === "Emulation.setScriptExecutionDisabled"
  );
  const tracker = await TargetTracker.start(a.connection, { admit: () => false, refuseWaitMs: 30 });
  const events: string[] = [];
  tracker.onChange((event, t) => events.push(`${event} ${t.info.targetId}`));
  a.attach("p1");
  // Past the failed replies and the wait: a rejection left unhandled would fail this test.
  await new Promise((r) => setTimeout(r, 100));
  const close = a.sent.filter((m) => m.method === "Target.closeTarget");
  assert.deepEqual(close.map((m) => m.params.targetId), ["p1"]);
  assert.deepEqual(events, ["refused p1"]);
});

Deno.test("TargetTracker: a target the admit hook holds stays paused and untracked until a place is free, in attach order; one whose session ends is dropped", async () => {
  const a = fakeBrowser();
  // Two workers at once; pages always.
  const tracker = await TargetTracker.start(a.connection, {
    admit: (t, tracked) =>
      t.info.type !== "worker" ||
      (tracked.filter((x) => x.info.type === "worker").length < 2 ? true : "hold"),
  });
  const events: string[] = [];
  tracker.onChange((event, t) => events.push(`${event} ${t.info.targetId}`));
  const resumed = (id: string) =>
    a.sent.some((m) => m.sessionId === `s-${id}` && m.method === "Runtime.runIfWaitingForDebugger");
  a.attach("p1");
  for (const w of ["w1", "w2", "w3", "w4", "w5"]) a.attach(w, "worker");
  a.attach("p2");
  await settle();
  assert.deepEqual(tracker.targets().map((t) => t.info.targetId), ["p1", "w1", "w2", "p2"]);
  assert.deepEqual(["w3", "w4", "w5"].map(resumed), [false, false, false], "held ones stay paused");
  assert.deepEqual(
    a.sent.filter((m) => ["s-w3", "s-w4", "s-w5"].includes(m.sessionId ?? "")),
    [],
    "nothing is sent to a held target",
  );
  assert.deepEqual(events.filter((e) => e.startsWith("held")), ["held w3", "held w4", "held w5"]);
  // w4's page went: its session ends while it is held.
  a.detach("w4");
  await settle();
  // w1 ends: the first held one runs, and only it.
  a.detach("w1");
  await settle();
  // Listed in attach order, as every target.
  assert.deepEqual(tracker.targets().map((t) => t.info.targetId), ["p1", "w2", "w3", "p2"]);
  assert.equal(resumed("w3"), true);
  assert.equal(resumed("w5"), false);
  // A page going frees no worker's place: w5 still waits.
  a.detach("p1");
  await settle();
  assert.equal(resumed("w5"), false);
  a.detach("w2");
  await settle();
  assert.equal(resumed("w5"), true);
  assert.equal(resumed("w4"), false, "a held target whose session ended never runs");
  assert.deepEqual(tracker.targets().map((t) => t.info.targetId), ["w3", "w5", "p2"]);
  assert.ok(events.includes("attached w5"));
});

/** Admits pages while fewer than `cap` are counted; records each count it was given. */
function capOf(cap: number, counted: string[][]) {
  return (_t: TrackedTarget, tracked: readonly TrackedTarget[]) => {
    const pages = tracked.filter((p) => p.info.type === "page").map((p) => p.info.targetId);
    counted.push(pages);
    return pages.length < cap;
  };
}

Deno.test("TargetTracker: a target whose setup failed keeps its place against the admit hook until Chromium says it is gone", async () => {
  const a = fakeBrowser();
  const counted: string[][] = [];
  // Setups that fail at once (a rejected hook) or late (a command timing out under load)
  // alike: the target was resumed with its setup and may have run.
  const failing = new Set(["f1", "f2"]);
  const tracker = await TargetTracker.start(a.connection, {
    admit: capOf(3, counted),
    refuseWaitMs: 0,
    hook: (t) =>
      failing.has(t.info.targetId)
        ? new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), 5))
        : Promise.resolve(),
  });
  const events: string[] = [];
  tracker.onChange((event, t) => events.push(`${event} ${t.info.targetId}`));
  a.attach("p1");
  a.attach("f1");
  a.attach("f2");
  await settle();
  assert.deepEqual(events.sort(), ["attached p1", "failed f1", "failed f2"]);
  assert.deepEqual(tracker.targets().map((t) => t.info.targetId), ["p1"]);
  // Each was resumed with its setup (it may have run), then closed.
  for (const id of ["f1", "f2"]) {
    assert.ok(a.sent.some((m) => m.sessionId === `s-${id}` && m.method.endsWith("Debugger")));
    assert.ok(a.sent.some((m) => m.method === "Target.closeTarget" && m.params.targetId === id));
  }
  // Closing, not yet gone: the next new ones are refused, the failed ones counted.
  a.attach("p2");
  a.attach("p3");
  await settle();
  assert.deepEqual(counted.slice(3), [["p1", "f1", "f2"], ["p1", "f1", "f2"]]);
  assert.deepEqual(events.filter((e) => e.startsWith("refused")).sort(), [
    "refused p2",
    "refused p3",
  ]);
  // Chromium says one is gone: its place, and only its, is free again.
  a.detach("f1");
  a.attach("p4");
  a.attach("p5");
  await settle();
  assert.deepEqual(counted.slice(5), [["p1", "f2"], ["p1", "p4", "f2"]]);
  assert.deepEqual(tracker.targets().map((t) => t.info.targetId), ["p1", "p4"]);
  assert.ok(events.includes("refused p5"));
  // A failed target's detach is no tab closing to the listeners (it was reported failed).
  assert.ok(!events.some((e) => e === "detached f1"));
  assert.deepEqual(a.logged, [
    "closing a page target that failed setup: Error; it counts as open until it is gone",
    "closing a page target that failed setup: Error; it counts as open until it is gone",
    "a page target that failed setup is gone; its place is free",
  ]);
});

Deno.test("TargetTracker: no new target runs past the admit hook's cap however setups fail and targets go, by Chromium's count", async () => {
  // The class: whatever frees a place (a setup that fails, a target that goes), the targets
  // that may be running (resumed, not yet confirmed gone) never exceed the cap.
  const a = fakeBrowser();
  const cap = 4;
  const counted: string[][] = [];
  const tracker = await TargetTracker.start(a.connection, {
    admit: capOf(cap, counted),
    refuseWaitMs: 0,
    hook: (t) =>
      Number(t.info.targetId.slice(1)) % 3 === 0
        ? Promise.reject(new Error("setup failed"))
        : Promise.resolve(),
  });
  /** Resumed and not yet detached, as Chromium would see them. */
  const running = new Set<string>();
  const resumedBy = (id: string) =>
    a.sent.some((m) =>
      m.sessionId === `s-${id}` && m.method === "Runtime.runIfWaitingForDebugger"
    ) && !a.sent.some((m) => m.sessionId === `s-${id}` && m.method === "Fetch.enable");
  let most = 0;
  for (let i = 0; i < 60; i++) {
    const id = `n${i}`;
    a.attach(id);
    await settle();
    if (resumedBy(id)) running.add(id);
    most = Math.max(most, running.size);
    // Now and then Chromium confirms one gone: the oldest closed one, or a page that closed
    // itself.
    if (i % 7 === 6) {
      const closed = [...running].find((r) =>
        a.sent.some((m) =>
          m.method === "Target.closeTarget" && m.params.targetId === r
        )
      ) ?? [...running][0];
      a.detach(closed);
      running.delete(closed);
      await settle();
    }
  }
  assert.ok(most <= cap, `${most} ran at once`);
  assert.equal(most, cap);
  assert.ok(tracker.targets().length <= cap);
});
