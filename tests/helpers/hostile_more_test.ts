import assert from "node:assert/strict";
import {
  controlWindowMs,
  MORE_CASES,
  MORE_CONTROLS,
  MORE_SEAMS,
  morePages,
} from "./hostile_more.ts";

Deno.test("morePages() runs every case and control in exactly one file", () => {
  const seams = [...Object.keys(MORE_SEAMS) as (keyof typeof MORE_SEAMS)[], "rest" as const];
  const cases = seams.flatMap((s) => morePages(s).cases.map((c) => c.path));
  const controls = seams.flatMap((s) => morePages(s).controls.map((k) => k.path));
  assert.deepEqual([...cases].sort(), MORE_CASES.map((c) => c.path).sort());
  assert.deepEqual([...controls].sort(), MORE_CONTROLS.map((k) => k.path).sort());
  for (const path of Object.values(MORE_SEAMS).flat()) {
    assert.ok(MORE_CASES.some((c) => c.path === path), `a seam names ${path}, a case`);
  }
});

Deno.test("controlWindowMs() waits 10x the healthy step, at least 4 s, at most the ceiling", () => {
  assert.equal(controlWindowMs(5, 15_000), 4_000);
  assert.equal(controlWindowMs(700, 15_000), 7_000);
  assert.equal(controlWindowMs(3_000, 15_000), 15_000);
  assert.equal(controlWindowMs(3_000, 10_000), 10_000);
});
