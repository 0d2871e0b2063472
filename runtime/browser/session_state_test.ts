import assert from "node:assert/strict";
import { SessionState } from "./session_state.ts";

Deno.test("SessionState counts actions and confirmations and measures time", () => {
  const s = new SessionState(1_000);
  s.countAction();
  s.countAction();
  s.countConfirmation();
  assert.deepEqual(s.counters(3_500), {
    tainted: false,
    actionsUsed: 2,
    secondsElapsed: 2.5,
    confirmationsUsed: 1,
  });
});

Deno.test("SessionState.taint() sticks and keeps the first reason", () => {
  const s = new SessionState();
  assert.equal(s.tainted, false);
  s.taint("login");
  s.taint("capture");
  assert.equal(s.tainted, true);
  assert.equal(s.taintReason, "login");
  assert.equal(s.counters().tainted, true);
});
