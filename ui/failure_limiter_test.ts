import assert from "node:assert/strict";
import { FailureLimiter } from "./failure_limiter.ts";

Deno.test("FailureLimiter.retryAfter() blocks a client after max failures until the window passes", () => {
  let now = 0;
  const limiter = new FailureLimiter({ max: 3, windowMs: 60_000, now: () => now });
  for (let i = 0; i < 3; i++) {
    assert.equal(limiter.retryAfter("a"), 0);
    limiter.fail("a");
    now += 1_000;
  }
  assert.equal(limiter.retryAfter("a"), 57, "the oldest failure is 3 s old");
  assert.equal(limiter.retryAfter("b"), 0, "other clients are not affected");
  now = 60_001;
  assert.equal(limiter.retryAfter("a"), 0);
});
