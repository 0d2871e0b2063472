import assert from "node:assert/strict";
import { MemorySink } from "../../tests/helpers/memory_sink.ts";
import type { IsolationFact } from "../isolation/mod.ts";
import { requireIsolation } from "./browser_isolation.ts";

const CGROUP = {
  backend: "v1" as const,
  limits: { memoryBytes: 2 ** 29, pids: 1024, cpuWeight: 50 },
};
const NETNS: IsolationFact = { kind: "netns", sandbox: true, cgroup: CGROUP };
const NONE: IsolationFact = {
  kind: "none",
  sandbox: true,
  reason: "bubblewrap is not installed",
  cgroup: CGROUP,
};

Deno.test("requireIsolation() lets a session start with a namespace, or when none is required", () => {
  const audit = new MemorySink();
  requireIsolation({ require_isolation: true }, NETNS, audit, "alice");
  requireIsolation({ require_isolation: false }, NONE, audit, "alice");
  assert.equal(audit.rows.length, 0);
});

Deno.test("requireIsolation() refuses without a namespace: ISOLATION_UNAVAILABLE, audited first", () => {
  const audit = new MemorySink();
  assert.throws(
    () => requireIsolation({ require_isolation: true }, NONE, audit, "alice"),
    (err: Error & { code?: string }) =>
      err.code === "ISOLATION_UNAVAILABLE" && /bubblewrap is not installed/.test(err.message),
  );
  assert.deepEqual(audit.rows, [{
    kind: "session_refused",
    source: "lifecycle",
    decision: "deny",
    reason: "ISOLATION_UNAVAILABLE",
    agent: "alice",
  }]);
});

Deno.test("requireIsolation() refuses when the audit row cannot be written (fail closed)", () => {
  const audit = new MemorySink();
  audit.failing = true;
  assert.throws(
    () => requireIsolation({ require_isolation: true }, NONE, audit, null),
    (err: Error & { code?: string }) => err.code === "AUDIT_UNAVAILABLE",
  );
});

Deno.test("requireIsolation() refuses a namespace without a cgroup, and says why", () => {
  const audit = new MemorySink();
  const unbounded: IsolationFact = {
    ...NETNS,
    cgroup: { backend: "none", reason: "no cgroup2 mount, and no cgroup v1 memory hierarchy" },
  };
  assert.throws(
    () => requireIsolation({ require_isolation: true }, unbounded, audit, "alice"),
    (err: Error & { code?: string }) =>
      err.code === "ISOLATION_UNAVAILABLE" && /no cgroup: no cgroup2 mount/.test(err.message),
  );
  assert.equal(audit.rows[0]?.reason, "ISOLATION_UNAVAILABLE");
  // A fact whose cgroup was never looked for counts as none (fail closed).
  assert.throws(() =>
    requireIsolation({ require_isolation: true }, { kind: "netns", sandbox: true }, audit, null)
  );
});
