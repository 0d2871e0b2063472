import assert from "node:assert/strict";
import { OmotaiError } from "../errors.ts";
import { Admission, launchAdmission, launchSlots, loadAdmission, loadSlots } from "./admission.ts";

/** A launch the test ends by hand. */
function deferred() {
  let resolve!: (v: string) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<string>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

function gate(slots: number, maxWaitMs?: number): Admission {
  return new Admission({
    slots,
    maxWaitMs,
    refusal: (waited) =>
      new OmotaiError("SERVER_BUSY", waited === undefined ? "closed" : `waited ${waited} ms`),
  });
}

Deno.test("launchSlots() is one per core, at least one; loadSlots() two per core, at least two", () => {
  for (const [cores, slots] of [[0, 1], [1, 1], [2, 2], [7.5, 7], [16, 16], [-3, 1]]) {
    assert.equal(launchSlots(cores), slots, `${cores} cores`);
  }
  for (const [cores, slots] of [[0, 2], [1, 2], [2, 4], [7.5, 14], [-3, 2]]) {
    assert.equal(loadSlots(cores), slots, `${cores} cores`);
  }
});

Deno.test("Admission.run() runs at most `slots` at once and admits the rest in arrival order", async () => {
  using g = gate(2);
  const launches = [0, 1, 2, 3, 4].map(() => deferred());
  const started: number[] = [];
  const results = launches.map((d, i) =>
    g.run(() => {
      started.push(i);
      return d.promise;
    })
  );
  for (const r of results) r.catch(() => {}); // settled below
  await tick();
  assert.deepEqual(started, [0, 1]);
  assert.equal(g.running, 2);
  assert.equal(g.waiting, 3);
  launches[1].resolve("b");
  await tick();
  assert.deepEqual(started, [0, 1, 2]);
  // A launch that fails frees its slot like one that succeeds.
  launches[0].reject(new Error("no browser"));
  await tick();
  assert.deepEqual(started, [0, 1, 2, 3]);
  launches[2].resolve("c");
  launches[3].resolve("d");
  await tick();
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
  launches[4].resolve("e");
  const settled = await Promise.allSettled(results);
  assert.deepEqual(settled.map((s) => s.status), [
    "rejected",
    "fulfilled",
    "fulfilled",
    "fulfilled",
    "fulfilled",
  ]);
  assert.equal(g.running, 0);
  assert.equal(g.waiting, 0);
});

Deno.test("Admission.run() refuses a launch whose turn does not come within the wait, and it never runs", async () => {
  using g = gate(1, 50);
  const first = deferred();
  const running = g.run(() => first.promise);
  let ran = false;
  await assert.rejects(
    g.run(() => {
      ran = true;
      return Promise.resolve("late");
    }),
    (err: unknown) =>
      err instanceof OmotaiError && err.code === "SERVER_BUSY" && err.message === "waited 50 ms",
  );
  assert.equal(ran, false);
  assert.equal(g.waiting, 0);
  first.resolve("a");
  assert.equal(await running, "a");
  // The slot is free again: the next launch runs at once.
  assert.equal(await g.run(() => Promise.resolve("next")), "next");
});

Deno.test("Admission[Symbol.dispose]() refuses waiting and later launches; a running one finishes", async () => {
  const g = gate(1);
  const first = deferred();
  const running = g.run(() => first.promise);
  const waiting = g.run(() => Promise.resolve("never"));
  g[Symbol.dispose]();
  await assert.rejects(waiting, /^Error: closed$|closed/);
  await assert.rejects(g.run(() => Promise.resolve("later")), /closed/);
  first.resolve("done");
  assert.equal(await running, "done");
});

Deno.test("Admission.run() with a launch that throws at once frees the slot", async () => {
  using g = gate(1);
  await assert.rejects(g.run(() => {
    throw new Error("sync");
  }));
  assert.equal(g.running, 0);
  assert.equal(await g.run(() => Promise.resolve("ok")), "ok");
});

Deno.test("launchAdmission() and loadAdmission() refuse with their codes, saying how long was waited", async () => {
  for (
    const [make, code, text] of [
      [launchAdmission, "BROWSER_LAUNCH_FAILED", /no browser could be started within 0 s/],
      [loadAdmission, "SERVER_BUSY", /no turn within 0 s/],
    ] as const
  ) {
    using g = make(1, 20);
    const slots = make === launchAdmission ? 1 : 2;
    const held = Array.from({ length: slots }, () => deferred());
    const running = held.map((d) => g.run(() => d.promise));
    await assert.rejects(
      g.run(() => Promise.resolve("late")),
      (err: unknown) => err instanceof OmotaiError && err.code === code && text.test(err.message),
    );
    const waiting = g.run(() => Promise.resolve("never"));
    g[Symbol.dispose]();
    await assert.rejects(
      waiting,
      (err: unknown) =>
        err instanceof OmotaiError && err.code === code && /shutting down/.test(err.message),
    );
    for (const d of held) d.resolve("done");
    await Promise.all(running);
  }
});

Deno.test("Admission.run() with a signal that aborts while it waits: CANCELLED, out of the queue, never run", async () => {
  using g = gate(1);
  const first = deferred();
  const running = g.run(() => first.promise);
  const abort = new AbortController();
  let ran = false;
  const waiting = g.run(() => {
    ran = true;
    return Promise.resolve("late");
  }, abort.signal);
  await tick();
  assert.equal(g.waiting, 1);
  abort.abort();
  await assert.rejects(
    waiting,
    (err: unknown) => err instanceof OmotaiError && err.code === "CANCELLED",
  );
  assert.equal(g.waiting, 0);
  first.resolve("a");
  await running;
  await tick();
  assert.equal(ran, false);
  // Already aborted: refused at once, even with a free slot.
  await assert.rejects(g.run(() => Promise.resolve(1), AbortSignal.abort()), /while it waited/);
  assert.equal(g.running, 0);
});
