import assert from "node:assert/strict";
import { withProgress } from "./progress.ts";
import { Redactor } from "../redact/mod.ts";

Deno.test("withProgress() notifies while work runs and stops when it settles", async () => {
  // The work settles after the third notification, not after a time: a loaded machine only
  // makes it wait longer.
  const sent: number[] = [];
  let third!: () => void;
  const thirdSent = new Promise<void>((r) => third = r);
  const result = await withProgress(
    "tok-1",
    (p) => {
      assert.equal(p.progressToken, "tok-1");
      sent.push(p.progress);
      if (sent.length === 3) third();
      return Promise.resolve();
    },
    () => thirdSent.then(() => "done"),
    30,
  );
  assert.equal(result, "done");
  assert.ok(sent.length >= 3, `only ${sent.length} notifications`);
  assert.deepEqual(sent, sent.map((_, i) => i + 1), "progress only grows");
  const count = sent.length;
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(sent.length, count, "nothing after the work settled");
});

Deno.test("withProgress() sends nothing without a token and survives a failing sender", async () => {
  let calls = 0;
  await withProgress(
    undefined,
    () => {
      calls++;
      return Promise.resolve();
    },
    () => new Promise((r) => setTimeout(r, 60)),
    10,
  );
  assert.equal(calls, 0);
  const v = await withProgress(
    7,
    () => Promise.reject(new Error("client gone")),
    () => new Promise<number>((r) => setTimeout(() => r(1), 40)),
    10,
  );
  assert.equal(v, 1);
});

Deno.test("withProgress() redacts its message", async () => {
  const redactor = new Redactor();
  redactor.add("still working");
  const messages: string[] = [];
  await withProgress(
    "t",
    (p) => {
      messages.push(p.message);
      return Promise.resolve();
    },
    () => new Promise((r) => setTimeout(r, 50)),
    10,
    redactor,
  );
  assert.ok(messages.length > 0);
  for (const m of messages) assert.match(m, /^\[redacted\] \(/);
});
