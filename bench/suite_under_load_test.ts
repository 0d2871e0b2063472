import assert from "node:assert/strict";
import { readSuiteOutput } from "./suite_under_load.ts";

const ESC = "\x1b";

Deno.test("readSuiteOutput() sums each file's top-level tests, skips steps, reads the summary", () => {
  const output = [
    "./tests/a_test.ts => one ... ok (1m3s)",
    "./tests/a_test.ts => two ... ok (850ms)",
    "./tests/a_test.ts => two ... step one ... ok (800ms)",
    `${ESC}[0m./tests/b_test.ts => three ... FAILED (2s)`,
    "./tests/b_test.ts => four ...----- post-test output end -----",
    "./tests/b_test.ts => four ... ok (12µs)",
    `${ESC}[1mFAILED${ESC}[0m | 1616 passed (148 steps) | 11 failed (15 steps) | 8 ignored (29m33s)`,
  ].join("\n");
  const read = readSuiteOutput(output);
  assert.deepEqual(read.passed, 1616);
  assert.deepEqual(read.failed, 11);
  assert.deepEqual(read.slowestFiles, [
    { file: "./tests/a_test.ts", seconds: 64 },
    { file: "./tests/b_test.ts", seconds: 2 },
  ]);
});

Deno.test("readSuiteOutput() of a passing run counts no failures", () => {
  const read = readSuiteOutput("ok | 12 passed (3 steps) | 0 failed | 1 ignored (9m2s)\n");
  assert.deepEqual([read.passed, read.failed], [12, 0]);
});
