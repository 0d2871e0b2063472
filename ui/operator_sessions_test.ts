import assert from "node:assert/strict";
import { OperatorSessions } from "./operator_sessions.ts";

Deno.test("OperatorSessions.touch() finds a live session and ends an idle one", () => {
  let now = 0;
  const sessions = new OperatorSessions({ idleMs: 1_000, now: () => now });
  const s = sessions.create();
  assert.match(s.id, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(s.csrf, s.id);
  now = 900;
  assert.equal(sessions.touch(s.id), s);
  now = 1_800;
  // peek() does not restart the clock; touch() at 900 did.
  assert.equal(sessions.peek(s.id), s);
  now = 1_901;
  assert.equal(sessions.peek(s.id), undefined);
  assert.equal(sessions.touch(s.id), undefined, "gone for good");
  assert.equal(sessions.touch(undefined), undefined);
  assert.equal(sessions.touch("forged"), undefined);
});

Deno.test("OperatorSessions.create() evicts the least recently used beyond max; delete() ends one", () => {
  const sessions = new OperatorSessions({ max: 2 });
  const a = sessions.create();
  const b = sessions.create();
  sessions.touch(a.id);
  const c = sessions.create();
  assert.equal(sessions.peek(b.id), undefined);
  assert.equal(sessions.peek(a.id), a);
  sessions.delete(c.id);
  assert.equal(sessions.peek(c.id), undefined);
});
