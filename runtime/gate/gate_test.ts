import assert from "node:assert/strict";
import { allowAllGate, decide, type Gate, type ProposedAction } from "./gate.ts";

const action: ProposedAction = { tool: "browser_click", kind: "click", args: { ref: "e1" } };

Deno.test("decide() allows what the gate allows", async () => {
  assert.deepEqual(await decide(allowAllGate, action), { decision: "allow" });
});

Deno.test("decide() fails closed on errors and malformed verdicts", async () => {
  const throwing: Gate = { check: () => Promise.reject(new Error("boom")) };
  assert.deepEqual(await decide(throwing, action), { decision: "deny", reason: "GATE_ERROR" });
  const junk = { check: () => Promise.resolve({ decision: "maybe" }) } as unknown as Gate;
  assert.deepEqual(await decide(junk, action), { decision: "deny", reason: "GATE_ERROR" });
  const empty = { check: () => Promise.resolve(undefined) } as unknown as Gate;
  assert.equal((await decide(empty, action)).decision, "deny");
});

Deno.test("decide() turns confirm into CONFIRM_UNAVAILABLE until approvals exist", async () => {
  const confirm: Gate = {
    check: () => Promise.resolve({ decision: "confirm", reason: "WRITE", detail: "POST /x" }),
  };
  assert.deepEqual(await decide(confirm, action), {
    decision: "deny",
    reason: "CONFIRM_UNAVAILABLE",
    detail: "POST /x",
  });
});
