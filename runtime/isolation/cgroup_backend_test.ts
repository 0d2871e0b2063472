import assert from "node:assert/strict";
import { describeCgroup } from "./cgroup_backend.ts";

const LIMITS = { memoryBytes: 512 * 2 ** 20, pids: 1024, cpuWeight: 50 };

Deno.test("describeCgroup() says the backend and its bounds, or none and why", () => {
  assert.equal(
    describeCgroup({ backend: "v1", limits: LIMITS }),
    "cgroup v1 (hybrid host): memory 512 MiB without swap, 1024 pids, cpu weight 50",
  );
  assert.equal(
    describeCgroup({ backend: "none", reason: "no cgroup2 mount" }),
    "none (no cgroup2 mount)",
  );
});
