import assert from "node:assert/strict";
import { GuardTickets } from "./guard_tickets.ts";

Deno.test("GuardTickets lets each allowed read through once, by exact method and URL", () => {
  const t = new GuardTickets();
  t.issue("GET", "https://portal.test:443/a?q=1");
  t.issue("get", "https://portal.test/a?q=1");
  assert.equal(t.take("HEAD", "https://portal.test/a?q=1"), false, "another method");
  assert.equal(t.take("GET", "https://portal.test/a?q=2"), false, "another query");
  assert.equal(t.take("GET", "https://portal.test/a?q=1"), true);
  assert.equal(t.take("GET", "https://portal.test/a?q=1"), true, "issued twice: taken twice");
  assert.equal(t.take("GET", "https://portal.test/a?q=1"), false, "then no more");
});

Deno.test("GuardTickets gives no ticket to a write, and none after its time", () => {
  let now = 0;
  const t = new GuardTickets(16, 1_000, () => now);
  t.issue("POST", "https://portal.test/transfer");
  assert.equal(t.take("POST", "https://portal.test/transfer"), false);
  t.issue("GET", "https://portal.test/late");
  now = 1_001;
  assert.equal(t.take("GET", "https://portal.test/late"), false);
  t.issue("GET", "not a url");
  assert.equal(t.take("GET", "not a url"), false);
});

Deno.test("GuardTickets keeps a bounded number of tickets", () => {
  const t = new GuardTickets(2);
  for (let i = 0; i < 5; i++) t.issue("GET", `https://q.test/${i}`);
  assert.equal(t.take("GET", "https://q.test/0"), false);
  assert.equal(t.take("GET", "https://q.test/4"), true);
});
