import assert from "node:assert/strict";
import { CdpTimeoutError, type TrackedTarget } from "../../cdp/mod.ts";
import { type Interruption, watchCall } from "./call_watch.ts";
import { Dialogs } from "./dialogs.ts";
import type { RendererCpu } from "./renderer_cpu.ts";

Deno.test("watchCall() whose probe throws stops probing and stays quiet: no unhandled rejection", async () => {
  let asked = 0;
  const watch = watchCall({
    currentTab: () => {
      asked++;
      throw new TypeError("injected into the call watch");
    },
    dialogs: new Dialogs(() => {}),
    busy: () => false,
    probeAfterMs: 5,
  });
  // A rejection escaping the timer would fail this test (and, in the runtime, the process).
  await new Promise((r) => setTimeout(r, 50));
  watch.dispose();
  // Once at the start (to follow the tab's navigations), once by the probe that failed.
  assert.equal(asked, 2, "the failed watch did not go on probing");
  const outcome = await Promise.race([
    watch.interrupted.then(() => "interrupted"),
    new Promise((r) => setTimeout(() => r("still waiting"), 10)),
  ]);
  assert.equal(outcome, "still waiting", "a failed watch interrupts nothing");
});

/** A tab whose renderer answers a probe or stays silent for as long as the probe waits. */
function fakeTab(
  silent: () => boolean,
  handlers: Map<string, (e: unknown) => void> = new Map(),
): TrackedTarget {
  const session = {
    detached: false,
    on(event: string, handler: (e: unknown) => void) {
      handlers.set(event, handler);
      return () => handlers.delete(event);
    },
    send(_method: string, _params: unknown, opts?: { timeoutMs?: number }) {
      if (!silent()) return Promise.resolve({ result: { type: "number", value: 0 } });
      const ms = opts?.timeoutMs ?? 0;
      return new Promise((_, reject) =>
        setTimeout(() => reject(new CdpTimeoutError("Runtime.evaluate", ms)), ms)
      );
    },
  };
  return { info: { targetId: "T1" }, session } as unknown as TrackedTarget;
}

/** Watches `tab` with fast probes and `cpu` as the renderers' readings; the outcome after `ms`. */
async function watchFor(
  tab: TrackedTarget,
  cpu: () => Promise<RendererCpu | undefined>,
  ms: number,
): Promise<{ outcome: Interruption | "none"; reads: number }> {
  let reads = 0;
  const watch = watchCall({
    currentTab: () => tab,
    dialogs: new Dialogs(() => {}),
    busy: () => false,
    cpu: () => {
      reads++;
      return cpu();
    },
    probeAfterMs: 5,
    probeTimeoutMs: 300,
  });
  try {
    const outcome = await Promise.race([
      watch.interrupted,
      new Promise<"none">((r) => setTimeout(() => r("none"), ms)),
    ]);
    return { outcome, reads };
  } finally {
    watch.dispose();
    // Let a probe in flight run out before the test's timer sanitizer looks.
    await new Promise((r) => setTimeout(r, 400));
  }
}

Deno.test("watchCall() calls a silent tab unresponsive only when a renderer spent the CPU", async () => {
  // Spinning: every reading, the renderer has spent 6 more CPU seconds.
  let spent = 0;
  const spinning = await watchFor(
    fakeTab(() => true),
    () => Promise.resolve(new Map([[41, spent += 6]])),
    3_000,
  );
  assert.notEqual(spinning.outcome, "none", "a spinning renderer is caught");
  assert.deepEqual(spinning.outcome, { kind: "unresponsive", tabId: "T1", why: "spinning" });

  // Starved: silent just as long, but its renderer barely ran (it waits for the CPU).
  let ran = 0;
  const starved = await watchFor(
    fakeTab(() => true),
    () => Promise.resolve(new Map([[41, ran += 0.01]])),
    2_500,
  );
  assert.equal(starved.outcome, "none", "a starved renderer is not killed");
  assert.ok(starved.reads >= 2, `the CPU was read as the silence went on (${starved.reads})`);

  // Unreadable CPU: only a minute of silence would count.
  const blind = await watchFor(fakeTab(() => true), () => Promise.resolve(undefined), 1_500);
  assert.equal(blind.outcome, "none");
});

Deno.test("watchCall() of a tab that answers never reads the CPU, and an answer ends a silence", async () => {
  const healthy = await watchFor(fakeTab(() => false), () => Promise.resolve(new Map()), 1_000);
  assert.equal(healthy.outcome, "none");
  assert.equal(healthy.reads, 0, "a healthy page costs no CPU reading");

  // Silent for one probe, answering the next, silent again: each silence starts afresh, so
  // the CPU spent before an answer never counts toward the next silence.
  let probes = 0;
  let cpu = 0;
  const flapping = await watchFor(
    fakeTab(() => probes++ % 2 === 0),
    () => Promise.resolve(new Map([[41, cpu += 6]])),
    2_500,
  );
  assert.equal(flapping.outcome, "none");
});

Deno.test("watchCall() starts no silence during the runtime's scan, but goes on judging one that began before it", async () => {
  const silentTab = fakeTab(() => true);
  const spin = () => {
    let cpu = 0;
    return () => Promise.resolve(new Map([[41, cpu += 6]]));
  };
  const watch = (busy: () => boolean) =>
    watchCall({
      currentTab: () => silentTab,
      dialogs: new Dialogs(() => {}),
      busy,
      cpu: spin(),
      probeAfterMs: 5,
      probeTimeoutMs: 300,
    });
  const outcome = async (w: ReturnType<typeof watchCall>, ms: number) => {
    try {
      return await Promise.race([
        w.interrupted,
        new Promise<"none">((r) => setTimeout(() => r("none"), ms)),
      ]);
    } finally {
      w.dispose();
      await new Promise((r) => setTimeout(r, 400));
    }
  };
  // The scan holds the renderer from the start: its silence is the scan's.
  assert.equal(await outcome(watch(() => true), 2_500), "none");
  // The page was silent before the scan began (its first probe went unanswered).
  let scanning = false;
  setTimeout(() => scanning = true, 350);
  const late = await outcome(watch(() => scanning), 5_000);
  assert.notEqual(late, "none");
  assert.equal(late !== "none" && late.kind, "unresponsive");
});

Deno.test("watchCall() calls a tab blocked when nothing ran or waited to run, but not one whose navigation is pending", async () => {
  const still = () => Promise.resolve(new Map([[41, 1.0]]));
  const noWait = () => Promise.resolve(new Map([[900, 0.5]]));
  const watch = (tab: TrackedTarget) =>
    watchCall({
      currentTab: () => tab,
      dialogs: new Dialogs(() => {}),
      busy: () => false,
      cpu: still,
      runDelays: noWait,
      probeAfterMs: 5,
      probeTimeoutMs: 300,
    });
  const outcome = async (w: ReturnType<typeof watchCall>, ms: number) => {
    try {
      return await Promise.race([
        w.interrupted,
        new Promise<"none">((r) => setTimeout(() => r("none"), ms)),
      ]);
    } finally {
      w.dispose();
      await new Promise((r) => setTimeout(r, 400));
    }
  };
  const handlers = new Map<string, (e: unknown) => void>();
  const waiting = watch(fakeTab(() => true, handlers));
  // The tab's first page waits for a connection: no renderer runs it yet.
  handlers.get("Page.frameStartedNavigating")?.({
    frameId: "T1",
    navigationType: "differentDocument",
  });
  const blocked = watch(fakeTab(() => true));
  const [nav, block] = await Promise.all([outcome(waiting, 11_000), outcome(blocked, 11_000)]);
  assert.equal(nav, "none", "a pending navigation is not a blocked page");
  assert.deepEqual(block, { kind: "unresponsive", tabId: "T1", why: "stuck" });
});
