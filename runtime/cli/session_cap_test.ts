import assert from "node:assert/strict";
import { defaultMaxSessions, machineMaxSessions, SESSION_MEMORY_BYTES } from "./session_cap.ts";

const GiB = 1024 ** 3;

Deno.test("defaultMaxSessions() is three quarters of memory at 256 MiB a session, at least 1", () => {
  for (
    const [total, cap] of [[0, 1], [256 * 1024 ** 2, 1], [2 * GiB, 6], [8 * GiB, 24], [
      24 * GiB,
      72,
    ]]
  ) assert.equal(defaultMaxSessions(total), cap, `${total} bytes`);
  assert.equal(SESSION_MEMORY_BYTES, 256 * 1024 ** 2);
});

Deno.test("machineMaxSessions() reads this machine's memory", () => {
  assert.equal(machineMaxSessions(), defaultMaxSessions(Deno.systemMemoryInfo().total));
});
