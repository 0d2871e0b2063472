import assert from "node:assert/strict";
import { withinMs } from "./within_ms.ts";

Deno.test("withinMs: the value when it comes in time, undefined when it does not, a rejection as is", async () => {
  assert.equal(await withinMs(Promise.resolve(7), 1_000), 7);
  let resolve!: (v: number) => void;
  const slow = new Promise<number>((r) => resolve = r);
  assert.equal(await withinMs(slow, 20), undefined);
  resolve(1);
  await assert.rejects(withinMs(Promise.reject(new Error("no")), 1_000), /no/);
});

Deno.test("withinMs: work that rejects after its time is up is no unhandled rejection", async () => {
  let reject!: (e: Error) => void;
  const late = new Promise<number>((_, r) => reject = r);
  assert.equal(await withinMs(late, 10), undefined);
  reject(new Error("late"));
  // A rejection left unhandled fails this test once the microtasks run.
  await new Promise((r) => setTimeout(r, 20));
});
