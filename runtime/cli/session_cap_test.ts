import assert from "node:assert/strict";
import {
  agentShare,
  defaultAgentShare,
  defaultMaxSessions,
  machineMaxSessions,
  SESSION_MEMORY_BYTES,
} from "./session_cap.ts";

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

Deno.test("defaultAgentShare() is half the cap rounded up: from 2 on, another agent always finds a place", () => {
  for (const [max, share] of [[1, 1], [2, 1], [3, 2], [4, 2], [16, 8], [17, 9], [72, 36]]) {
    assert.equal(defaultAgentShare(max), share, `cap ${max}`);
    if (max >= 2) assert.ok(max - defaultAgentShare(max) >= 1, `cap ${max}`);
  }
});

Deno.test("agentShare() is the policy's max_sessions (0: none of its own), else the default share", () => {
  assert.equal(agentShare(undefined, 3), 2);
  assert.equal(agentShare(3, 3), 3);
  assert.equal(agentShare(1, 16), 1);
  // Above the cap: the cap still holds (SERVER_BUSY), the share never binds.
  assert.equal(agentShare(50, 16), 50);
  assert.equal(agentShare(0, 16), undefined);
  assert.equal(agentShare(undefined, undefined), undefined);
  assert.equal(agentShare(2, undefined), 2);
});
