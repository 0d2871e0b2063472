import assert from "node:assert/strict";
import { FakeHost, fakeTarget } from "../../tests/helpers/fake_target.ts";
import {
  CHAIN_DIALOGS,
  type DialogLoop,
  Dialogs,
  LOOP_DIALOGS,
  LOOP_WINDOW_MS,
} from "./dialogs.ts";

/** Dialogs over fake tabs, with a clock the test moves. */
function world(loopWindowMs?: number) {
  const host = new FakeHost();
  const loops: DialogLoop[] = [];
  let now = 0;
  const dialogs = new Dialogs((l) => loops.push(l), { now: () => now, loopWindowMs });
  const tab = (id: string) => {
    const { target, session } = fakeTarget(host, "page", id);
    dialogs.watch(target);
    return {
      open(type = "alert") {
        session.dispatch("Page.javascriptDialogOpening", {
          url: "https://portal.test/",
          message: "again",
          type,
          hasBrowserHandler: false,
        });
      },
      answers: () =>
        host.calls.filter((c) =>
          c.sessionId === session.id && c.method === "Page.handleJavaScriptDialog"
        ).map((c) => c.params),
    };
  };
  return { host, dialogs, loops, tab, tick: (ms: number) => now += ms };
}

Deno.test("Dialogs: a chain paced slower than the rate rule is a loop at CHAIN_DIALOGS", async () => {
  const w = world();
  const a = w.tab("A");
  for (let i = 1; i < CHAIN_DIALOGS; i++) {
    a.open(i % 2 ? "alert" : "confirm");
    assert.ok(w.dialogs.openOn("A"), `dialog ${i} is shown`);
    await w.dialogs.answer("A", true);
    // The agent takes its time: never LOOP_DIALOGS within the window.
    w.tick(LOOP_WINDOW_MS / (LOOP_DIALOGS - 1) + 1);
  }
  assert.deepEqual(w.loops, []);
  a.open();
  assert.deepEqual(w.loops, [{ tabId: "A", count: CHAIN_DIALOGS, reason: "DIALOG_CHAIN" }]);
  // The looping dialog is dismissed, not shown; later ones too.
  assert.equal(w.dialogs.openOn("A"), undefined);
  a.open();
  assert.deepEqual(a.answers().slice(-2), [{ accept: false }, { accept: false }]);
});

Deno.test("Dialogs.progress starts a tab's chain again; other tabs keep theirs", async () => {
  const w = world();
  const a = w.tab("A");
  const b = w.tab("B");
  for (let i = 1; i < CHAIN_DIALOGS; i++) {
    a.open();
    await w.dialogs.answer("A", true);
    b.open();
    await w.dialogs.answer("B", true);
    w.tick(LOOP_WINDOW_MS);
  }
  w.dialogs.progress("A");
  a.open();
  b.open();
  assert.deepEqual(w.loops.map((l) => `${l.tabId} ${l.reason}`), ["B DIALOG_CHAIN"]);
});

Deno.test("Dialogs: the rate rule still catches a fast loop first", () => {
  const w = world();
  const a = w.tab("A");
  for (let i = 0; i < LOOP_DIALOGS; i++) {
    a.open();
    void w.dialogs.answer("A", true);
  }
  assert.deepEqual(w.loops, [{ tabId: "A", count: LOOP_DIALOGS, reason: "DIALOG_RATE" }]);
});

Deno.test("Dialogs.leave answers the open dialog and every later one unseen: beforeunload accepted, others dismissed", async () => {
  const w = world();
  const a = w.tab("A");
  const seen: string[] = [];
  w.dialogs.onOpen((d) => seen.push(d.type));
  a.open("confirm");
  const leave = w.dialogs.leave("A");
  assert.equal(w.dialogs.openOn("A"), undefined);
  a.open("beforeunload");
  a.open("prompt");
  assert.deepEqual(a.answers(), [{ accept: false }, { accept: true }, { accept: false }]);
  assert.deepEqual(seen, ["confirm"]);
  leave.release();
  a.open("alert");
  assert.deepEqual(seen, ["confirm", "alert"]);
  // A page that keeps opening them as it is left trips a rule: the leave is stuck.
  await w.dialogs.answer("A", true);
  const again = w.dialogs.leave("A");
  for (let i = 0; i < LOOP_DIALOGS; i++) a.open();
  assert.equal(await again.stuck, "DIALOG_RATE");
  assert.deepEqual(w.loops, [], "the leaver closes the tab, not the loop handler");
  again.release();
});

Deno.test("Dialogs.leave is stuck when a dialog cannot be answered (the page handler moved on)", async () => {
  const w = world();
  const a = w.tab("A");
  a.open();
  w.host.failing.add("Page.handleJavaScriptDialog");
  const leave = w.dialogs.leave("A");
  assert.equal(await leave.stuck, "DIALOG_UNANSWERABLE");
  leave.release();
});

Deno.test("Dialogs: loopWindowMs sets the rate rule's window; by default it is LOOP_WINDOW_MS", () => {
  // LOOP_DIALOGS dialogs spread just over 4 s: a loop in the default window, none in a 4 s one.
  const step = 4_000 / (LOOP_DIALOGS - 1) + 1;
  for (const [windowMs, loops] of [[undefined, 1], [4_000, 0]] as const) {
    const w = world(windowMs);
    assert.equal(w.dialogs.loopWindowMs, windowMs ?? LOOP_WINDOW_MS);
    const a = w.tab("A");
    for (let i = 0; i < LOOP_DIALOGS; i++) {
      a.open();
      void w.dialogs.answer("A", true);
      w.tick(step);
    }
    assert.deepEqual(w.loops.map((l) => l.reason), loops ? ["DIALOG_RATE"] : [], `${windowMs}`);
  }
});
