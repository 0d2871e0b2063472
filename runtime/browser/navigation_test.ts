import assert from "node:assert/strict";
import type { CdpSession, TrackedTarget } from "../../cdp/mod.ts";
import { LEFT_BEHIND_MS, LeftBehind } from "./left_behind.ts";
import { runAndSettle } from "./navigation.ts";

/** A page session whose events the test sends: the main frame `F`, nothing else. */
function fakePage() {
  const listeners = new Map<string, ((params: unknown) => void)[]>();
  const session = {
    detached: false,
    on(event: string, fn: (params: unknown) => void) {
      listeners.set(event, [...(listeners.get(event) ?? []), fn]);
      return () => listeners.set(event, (listeners.get(event) ?? []).filter((f) => f !== fn));
    },
    onDetach() {
      return () => {};
    },
  };
  const emit = (event: string, params: unknown) => {
    for (const fn of listeners.get(event) ?? []) fn(params);
  };
  /** The main frame starts navigating to document `L1`. */
  const start = () =>
    emit("Page.frameStartedNavigating", {
      frameId: "F",
      loaderId: "L1",
      navigationType: "differentDocument",
    });
  /** Document `L1` is parsed and loaded. */
  const load = () => {
    emit("Page.lifecycleEvent", { frameId: "F", loaderId: "L1", name: "DOMContentLoaded" });
    emit("Page.lifecycleEvent", { frameId: "F", loaderId: "L1", name: "load" });
  };
  /** A main-frame navigation that starts after `ms` and loads at once. */
  const navigateAfter = (ms: number) =>
    setTimeout(() => {
      start();
      load();
    }, ms);
  return { page: session as unknown as CdpSession, navigateAfter, emit, start, load };
}

/** `page` followed as a session's tab whose hook counts its releases (`left_behind.ts`). */
function releasesOf(page: CdpSession): { count: number } {
  const seen = { count: 0 };
  new LeftBehind(() => () => () => {
    seen.count++;
  }).watch({ session: page } as unknown as TrackedTarget);
  return seen;
}

Deno.test("runAndSettle() waits for the tab's start of a navigation its hold judged sent, when the event comes after the judgement", async () => {
  // The proxy's judgement reaches the runtime before the tab's own event over the CDP pipe
  // (a loaded machine): the navigation that left is still the tab's, and its answer loads.
  const { page, navigateAfter } = fakePage();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const out = await runAndSettle(page, () => Promise.resolve(), {
    mainFrameId: "F",
    before: () => {
      timer = navigateAfter(400);
      return Promise.resolve(true);
    },
  });
  clearTimeout(timer);
  assert.deepEqual(out, { navigated: true, timedOut: false });
});

Deno.test("runAndSettle() without a judged navigation does not wait for a late start (the tab did not navigate)", async () => {
  const { page, navigateAfter } = fakePage();
  const timer = navigateAfter(1_000);
  try {
    const out = await runAndSettle(page, () => Promise.resolve(), {
      mainFrameId: "F",
      before: () => Promise.resolve(false),
    });
    assert.deepEqual(out, { navigated: false });
  } finally {
    clearTimeout(timer);
  }
});

Deno.test("runAndSettle() releases what earlier documents left behind while the navigation it started has no main response", async () => {
  const { page, emit, start, load } = fakePage();
  const released = releasesOf(page);
  const out = await runAndSettle(page, () => {
    start();
    // The main response comes only once what held it was released.
    (async () => {
      while (released.count === 0) await new Promise((r) => setTimeout(r, 20));
      emit("Page.frameNavigated", { frame: { id: "F", loaderId: "L1" } });
      load();
    })();
    return Promise.resolve();
  }, { mainFrameId: "F", timeoutMs: 30_000 });
  assert.deepEqual(out, { navigated: true, timedOut: false });
  assert.ok(released.count >= 1);
});

Deno.test("runAndSettle() releases nothing once the navigation's main response came, however long the page then takes to load", async () => {
  const { page, emit, start, load } = fakePage();
  const released = releasesOf(page);
  const out = await runAndSettle(page, () => {
    start();
    emit("Page.frameNavigated", { frame: { id: "F", loaderId: "L1" } });
    // Parsed only after the release would have come, had the navigation been late.
    setTimeout(() => {
      load();
    }, LEFT_BEHIND_MS + 1_000);
    return Promise.resolve();
  }, { mainFrameId: "F", timeoutMs: 30_000 });
  assert.deepEqual(out, { navigated: true, timedOut: false });
  assert.equal(released.count, 0);
});
