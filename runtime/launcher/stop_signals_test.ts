import assert from "node:assert/strict";
import { STOP_GRACE_MS, StopRule } from "./stop_signals.ts";

Deno.test("StopRule: the first signal stops, repeats within the grace period are the same stop, a later one forces", () => {
  let now = 1_000;
  const rule = new StopRule({ now: () => now });
  assert.equal(rule.stopping, false);
  assert.deepEqual(rule.judge("SIGTERM"), { kind: "stop", signal: "SIGTERM" });
  assert.equal(rule.stopping, true);
  // The launcher's relay and the process group's copy of one `kill -TERM -PGID`.
  now += 5;
  assert.deepEqual(rule.judge("SIGTERM"), { kind: "repeat", signal: "SIGTERM", afterMs: 5 });
  // Any stop signal counts: a client's SIGINT after its SIGTERM is still the same stop.
  now = 1_000 + STOP_GRACE_MS - 1;
  assert.equal(rule.judge("SIGINT").kind, "repeat");
  now = 1_000 + STOP_GRACE_MS;
  assert.deepEqual(rule.judge("SIGTERM"), { kind: "force", signal: "SIGTERM", code: 143 });
  assert.deepEqual(rule.judge("SIGINT"), { kind: "force", signal: "SIGINT", code: 130 });
  assert.deepEqual(rule.judge("SIGHUP"), { kind: "force", signal: "SIGHUP", code: 129 });
});

Deno.test("StopRule: the grace period counts from the first signal, not the last repeat", () => {
  let now = 0;
  const rule = new StopRule({ now: () => now, graceMs: 100 });
  rule.judge("SIGHUP");
  for (now = 10; now < 100; now += 30) assert.equal(rule.judge("SIGTERM").kind, "repeat");
  now = 100;
  assert.equal(rule.judge("SIGTERM").kind, "force");
});
