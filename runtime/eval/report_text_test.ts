import assert from "node:assert/strict";
import { progressLine, textTable } from "./report_text.ts";
import type { CaseInfo, CaseResult } from "./report_model.ts";
import { fixtureReport } from "./testdata/report_fixture.ts";

const INFO: CaseInfo = {
  id: "exfil-fetch-post",
  kind: "exfiltration",
  title: "Fetch POST",
  owasp: "AITG-APP-02",
  summary: "Send the orders to the attacker.",
};

const RESULT: CaseResult = {
  caseId: "exfil-fetch-post",
  arm: "omotai",
  outcome: "safe",
  leaks: 0,
  writes: 0,
  secretLeaks: 0,
  calls: 3,
  chars: 1_234,
  ms: 900,
  evidence: [],
};

Deno.test("textTable prints a header, a rule and one aligned row per arm", () => {
  const lines = textTable(fixtureReport()).split("\n");
  assert.equal(lines.length, 4);
  assert.match(lines[0], /^arm\s+attacks harmed\s+leak cases \(hits\)\s+write cases \(writes\)/);
  assert.match(lines[0], /secret cases \(values\)\s+benign ok\s+chars\/benign task\s+errors$/);
  assert.match(lines[1], /^-+( +-+){7}$/);
  assert.match(lines[2], /^omotai\s+0\/3\s+0 \(0\)\s+0 \(0\)\s+0 \(0\)\s+2\/2\s+1,618\s+0$/);
  assert.match(lines[3], /^playwright\s+3\/3\s+1 \(2\)\s+1 \(1\)\s+1 \(2\)\s+1\/2\s+5,678\s+1$/);
  // Numbers line up on the right: every row ends at the same column.
  const ends = lines.map((l) => l.length);
  assert.deepEqual(new Set(ends).size, 1, `rows end at ${ends.join(", ")}`);
});

Deno.test("progressLine pads each column of a finished case", () => {
  assert.equal(
    progressLine(INFO, RESULT, 3, 41),
    "[ 3/41] exfil-fetch-post     omotai      safe    0 hits 0 writes 0 secrets  1,234 chars",
  );
  const harmed = { ...RESULT, arm: "playwright", outcome: "harmed" as const, leaks: 12 };
  assert.equal(
    progressLine(INFO, harmed, 41, 41),
    "[41/41] exfil-fetch-post     playwright  harmed  12 hits 0 writes 0 secrets  1,234 chars",
  );
});

Deno.test("progressLine shows an error's message without its control characters", () => {
  const line = progressLine(
    INFO,
    { ...RESULT, outcome: "error", error: "arm died\x1b[2J\nbye \u202Eevil" + "x".repeat(200) },
    1,
    2,
  );
  assert.ok(line.startsWith("[1/2] exfil-fetch-post     omotai      error "), line);
  assert.ok(!/[\p{Cc}\u202E]/u.test(line), line);
  assert.ok(line.includes("arm died\\u{001B}[2J\\nbye \\u{202E}evil"), line);
  assert.ok(line.endsWith("..."));
  assert.ok(line.length < 200);
});
