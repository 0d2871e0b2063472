import assert from "node:assert/strict";
import { type Facts, FACTS_ABI_VERSION, factsJsonSchema, FactsSchema } from "./facts.ts";

/** A realistic facts object for a POST form submit. */
export const SUBMIT_FACTS: Facts = {
  abi: FACTS_ABI_VERSION,
  kind: "click",
  target: { scheme: "http", origin: "http://portal.test", path: "/transfer" },
  method: "POST",
  resource_type: "action",
  initiator: "agent",
  frame: { top: true, origin: "http://portal.test" },
  form: {
    method: "POST",
    action_origin: "http://portal.test",
    action_path: "/transfer",
    submits: true,
    fields: [{ name: "amount", type: "text" }, { name: "pw", type: "password" }],
  },
  element: { tag: "button", type: "submit", role: "button", link_origin: null, link_path: null },
  session: { tainted: false, actions_used: 3, seconds_elapsed: 12.5, confirmations_used: 0 },
};

Deno.test("FactsSchema accepts a form submit and rejects unknown keys", () => {
  assert.ok(FactsSchema.safeParse(SUBMIT_FACTS).success);
  assert.equal(FactsSchema.safeParse({ ...SUBMIT_FACTS, extra: 1 }).success, false);
  assert.equal(FactsSchema.safeParse({ ...SUBMIT_FACTS, abi: 2 }).success, false);
});

Deno.test("factsJsonSchema() matches the published schema file", async () => {
  const published = JSON.parse(
    await Deno.readTextFile(new URL("../../docs/policy-facts.schema.json", import.meta.url)),
  );
  assert.deepEqual(published, factsJsonSchema());
});
