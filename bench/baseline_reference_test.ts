import assert from "node:assert/strict";
import { spec } from "../tests/helpers/policies.ts";
import { PolicyEngine } from "../runtime/policy/engine.ts";
import { baselineVerdict } from "./baseline_reference.ts";
import { baselineCaseFacts } from "./facts_mix.ts";

Deno.test("baselineVerdict() decides exactly like the baseline WASM module", async () => {
  const { config, facts } = await baselineCaseFacts();
  const wasm = await Deno.readFile(new URL("../policies-wasm/dist/baseline.wasm", import.meta.url));
  await using engine = await PolicyEngine.create([await spec("baseline", wasm, config)]);
  for (const f of facts) {
    const { verdicts } = await engine.evaluate(f);
    const { module: _m, kind: _k, ...wasmOut } = verdicts[0];
    assert.deepEqual(wasmOut, baselineVerdict(f, config), JSON.stringify(f));
  }
});
