import assert from "node:assert/strict";
import { baselineWasm, bundledWasm } from "./helpers/policies.ts";
import { parse } from "yaml";
import { listModules } from "../policies-wasm/build.ts";
import { formatResults, runCases } from "../runtime/policy/case_runner.ts";

/** The modules the repo ships, by manifest name. */
const SHIPPED = ["baseline", "no-third-party-forms", "path-allowlist"];

Deno.test("runCases() passes every shipped policy module's whole case table", async () => {
  const ran = new Map<string, number>();
  for (const { source, manifest } of await listModules()) {
    const casesFile = source.replace(/\.ts$/, ".cases.yaml");
    const text = await Deno.readTextFile(casesFile);
    const listed = (parse(text) as { cases: unknown[] }).cases.length;
    const wasm = await bundledWasm(manifest.name);
    const results = await runCases(wasm, text, casesFile);
    assert.ok(results.length >= 4, manifest.name);
    assert.equal(results.length, listed, `${manifest.name}: every case of ${casesFile} ran`);
    assert.ok(results.every((r) => r.ok), `${manifest.name}\n${formatResults(results)}`);
    ran.set(manifest.name, results.length);
  }
  assert.deepEqual([...ran.keys()], SHIPPED);
  for (const [name, n] of ran) assert.ok(n > 0, `${name} ran no case`);
});

Deno.test("runCases() reports a wrong expectation with a readable diff", async () => {
  const wasm = await baselineWasm();
  const yaml = `config: { allowed_origins: [https://a.test] }
cases:
  - name: wrongly expected
    facts: { kind: navigate, target: { scheme: https, origin: https://b.test, path: / } }
    expect: { decision: allow }
`;
  const results = await runCases(wasm, yaml);
  assert.equal(results.length, 1);
  assert.equal(results[0].ok, false);
  assert.match(
    formatResults(results),
    /FAIL {2}wrongly expected\n +expected: allow\n +actual: +deny ORIGIN_NOT_ALLOWED\n0 passed, 1 failed/,
  );
});
