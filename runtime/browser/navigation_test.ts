import assert from "node:assert/strict";
import type { CdpSession } from "../../cdp/mod.ts";
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
  /** A main-frame navigation that starts after `ms` and loads at once. */
  const navigateAfter = (ms: number) =>
    setTimeout(() => {
      emit("Page.frameStartedNavigating", {
        frameId: "F",
        loaderId: "L1",
        navigationType: "differentDocument",
      });
      emit("Page.lifecycleEvent", { frameId: "F", loaderId: "L1", name: "DOMContentLoaded" });
      emit("Page.lifecycleEvent", { frameId: "F", loaderId: "L1", name: "load" });
    }, ms);
  return { page: session as unknown as CdpSession, navigateAfter };
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
