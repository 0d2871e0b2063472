import assert from "node:assert/strict";
import { baseFacts, FRESH_SESSION } from "../policy/fact_builders.ts";
import { allowAllGate, decide, type Gate, type ProposedAction } from "./gate.ts";

const action: ProposedAction = {
  tool: "browser_click",
  kind: "click",
  facts: baseFacts("click", FRESH_SESSION),
  session: { id: "s-1", agent: "test" },
};

Deno.test("decide() allows what the gate allows", async () => {
  assert.deepEqual(await decide(allowAllGate, action), { decision: "allow", reason: "OK" });
});

Deno.test("decide() fails closed on errors and malformed verdicts", async () => {
  const throwing: Gate = { check: () => Promise.reject(new Error("boom")) };
  assert.deepEqual(await decide(throwing, action), { decision: "deny", reason: "GATE_ERROR" });
  const junk = { check: () => Promise.resolve({ decision: "maybe" }) } as unknown as Gate;
  assert.deepEqual(await decide(junk, action), { decision: "deny", reason: "GATE_ERROR" });
  const empty = { check: () => Promise.resolve(undefined) } as unknown as Gate;
  assert.equal((await decide(empty, action)).decision, "deny");
  const noReason = { check: () => Promise.resolve({ decision: "allow" }) } as unknown as Gate;
  assert.deepEqual(await decide(noReason, action), { decision: "deny", reason: "GATE_ERROR" });
});

Deno.test("decide() turns an unresolved confirm into CONFIRM_UNAVAILABLE", async () => {
  const confirm: Gate = {
    check: () => Promise.resolve({ decision: "confirm", reason: "WRITE", detail: "POST /x" }),
  };
  assert.deepEqual(await decide(confirm, action), {
    decision: "deny",
    reason: "CONFIRM_UNAVAILABLE",
    detail: "POST /x",
  });
});

Deno.test("decide() hands the gate the call's abort signal", async () => {
  let seen: AbortSignal | undefined;
  const gate: Gate = {
    check: (_a, signal) => {
      seen = signal;
      return Promise.resolve({ decision: "allow", reason: "OK" });
    },
  };
  const controller = new AbortController();
  await decide(gate, action, controller.signal);
  assert.equal(seen, controller.signal);
});
