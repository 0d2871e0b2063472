import assert from "node:assert/strict";
import { listModules } from "../policies-wasm/build.ts";
import { formatResults, runCases } from "../runtime/policy/case_runner.ts";

Deno.test("every shipped policy module passes its case table", async () => {
  for (const { source, manifest } of await listModules()) {
    const casesFile = source.replace(/\.ts$/, ".cases.yaml");
    const wasm = await Deno.readFile(`policies-wasm/dist/${manifest.name}.wasm`);
    const results = await runCases(wasm, await Deno.readTextFile(casesFile), casesFile);
    assert.ok(results.length >= 4, manifest.name);
    assert.ok(results.every((r) => r.ok), `${manifest.name}\n${formatResults(results)}`);
  }
});

Deno.test("runCases() reports a wrong expectation with a readable diff", async () => {
  const wasm = await Deno.readFile("policies-wasm/dist/baseline.wasm");
  const yaml = `config: { allowed_origins: [https://a.test] }
cases:
  - name: wrongly expected
    facts: { kind: navigate, target: { scheme: https, origin: https://b.test, path: / } }
    expect: { decision: allow }
`;
  const results = await runCases(wasm, yaml);
  assert.equal(results[0].ok, false);
  assert.match(
    formatResults(results),
    /FAIL {2}wrongly expected\n +expected: allow\n +actual: +deny ORIGIN_NOT_ALLOWED\n0 passed, 1 failed/,
  );
});
