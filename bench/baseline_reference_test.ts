import assert from "node:assert/strict";
import { parse } from "yaml";
import { baselineWasm, spec } from "../tests/helpers/policies.ts";
import { PolicyEngine } from "../runtime/policy/engine.ts";
import { baselineVerdict } from "./baseline_reference.ts";
import { baselineCaseFacts } from "./facts_mix.ts";

/** The case files `baselineCaseFacts()` reads. */
const CASE_FILES = [new URL("../policies-wasm/modules/baseline.cases.yaml", import.meta.url)];

Deno.test("baselineVerdict() decides exactly like the baseline WASM module", async () => {
  const { config, facts } = await baselineCaseFacts();
  let listed = 0;
  for (const file of CASE_FILES) {
    const cases = (parse(await Deno.readTextFile(file)) as { cases: unknown[] }).cases;
    assert.ok(cases.length > 0, `${file} contributes cases`);
    listed += cases.length;
  }
  assert.equal(facts.length, listed, "every listed case is compared");
  assert.ok(facts.length >= 20, `only ${facts.length} cases`);
  const wasm = await baselineWasm();
  await using engine = await PolicyEngine.create([await spec("baseline", wasm, config)]);
  const decisions = new Set<string>();
  let compared = 0;
  for (const f of facts) {
    const { verdicts } = await engine.evaluate(f);
    const { module: _m, kind: _k, ...wasmOut } = verdicts[0];
    assert.deepEqual(wasmOut, baselineVerdict(f, config), JSON.stringify(f));
    decisions.add(wasmOut.decision);
    compared++;
  }
  assert.equal(compared, listed);
  // The table exercises both outcomes, so a reference that always allows (or denies) fails.
  assert.ok(decisions.has("allow") && decisions.has("deny"), [...decisions].join(", "));
});
