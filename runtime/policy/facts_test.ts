import assert from "node:assert/strict";
import { SUBMIT_FACTS } from "../../tests/fixtures/facts.ts";
import { factsJsonSchema, FactsSchema } from "./facts.ts";

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
