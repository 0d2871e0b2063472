import assert from "node:assert/strict";
import { Deadlines } from "./deadlines.ts";

Deno.test("Deadlines fires a due wait once and never a cancelled one", () => {
  let now = 0;
  const d = new Deadlines(1_000, () => now);
  const fired: string[] = [];
  d.arm(500, () => fired.push("a"));
  const b = d.arm(500, () => fired.push("b"));
  d.arm(5_000, () => fired.push("c"));
  d.cancel(b);
  now = 400;
  d.tick();
  assert.deepEqual(fired, []);
  now = 600;
  d.tick();
  d.tick();
  assert.deepEqual(fired, ["a"]);
  assert.equal(d.size, 1);
  now = 5_000;
  d.tick();
  assert.deepEqual(fired, ["a", "c"]);
  assert.equal(d.size, 0);
});

Deno.test("Deadlines keeps firing the others when one wait throws", async () => {
  const d = new Deadlines(10);
  const fired: string[] = [];
  d.arm(0, () => {
    throw new Error("boom");
  });
  d.arm(0, () => fired.push("after"));
  await new Promise((r) => setTimeout(r, 40));
  assert.deepEqual(fired, ["after"]);
  assert.equal(d.size, 0);
});
