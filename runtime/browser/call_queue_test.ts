import assert from "node:assert/strict";
import { CallQueue } from "./call_queue.ts";

Deno.test("CallQueue.run() runs calls one after another, past failures", async () => {
  const q = new CallQueue();
  const log: string[] = [];
  const slow = q.run(async () => {
    log.push("a start");
    await new Promise((r) => setTimeout(r, 30));
    log.push("a end");
    throw new Error("a failed");
  });
  const next = q.run(() => {
    log.push("b");
    return Promise.resolve(2);
  });
  await assert.rejects(slow, /a failed/);
  assert.equal(await next, 2);
  assert.deepEqual(log, ["a start", "a end", "b"]);
});
