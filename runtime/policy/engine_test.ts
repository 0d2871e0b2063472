import assert from "node:assert/strict";
import { baselineWasm, spec, testModulesWasm } from "../../tests/helpers/policies.ts";
import { PolicyEngine } from "./engine.ts";
import { SUBMIT_FACTS } from "../../tests/fixtures/facts.ts";

const BASE_POLICY = { allowed_origins: ["http://portal.test"], read_only: true };

/** The fixture modules this file runs, compiled in one compiler process for all its tests. */
const FIXTURES = ["trap", "junk", "loop", "allow_all"];
async function fixtureWasm(name: string): Promise<Uint8Array> {
  const all = await testModulesWasm(FIXTURES.map((f) => `tests/fixtures/policies/${f}.ts`));
  return all[FIXTURES.indexOf(name)];
}

Deno.test("PolicyEngine runs the baseline module on facts", async () => {
  const wasm = await baselineWasm();
  await using engine = await PolicyEngine.create([await spec("baseline", wasm, BASE_POLICY)]);
  const { verdict } = await engine.evaluate(SUBMIT_FACTS);
  assert.deepEqual(verdict, {
    decision: "deny",
    reason: "READ_ONLY_SUBMIT",
    module: "baseline",
    rule: "read_only",
  });
  const get = { ...SUBMIT_FACTS, form: { ...SUBMIT_FACTS.form!, method: "GET" } };
  assert.equal((await engine.evaluate(get)).verdict.decision, "allow");
});

Deno.test("PolicyEngine turns a trap, junk output and a hang into POLICY_ERROR and keeps going", async () => {
  const base = await baselineWasm();
  const get = { ...SUBMIT_FACTS, form: { ...SUBMIT_FACTS.form!, method: "GET" } };
  for (const bad of ["trap", "junk", "loop"]) {
    const wasm = await fixtureWasm(bad);
    await using engine = await PolicyEngine.create(
      [await spec("baseline", base, BASE_POLICY), await spec(bad, wasm)],
      { fuel: 5_000_000 },
    );
    const first = await engine.evaluate(get);
    assert.equal(first.verdict.decision, "deny", bad);
    assert.equal(first.verdict.reason, "POLICY_ERROR", bad);
    assert.equal(first.verdicts.find((v) => v.module === bad)?.reason, "POLICY_ERROR", bad);
    // The engine recovers: the next evaluation still answers (and still denies).
    const second = await engine.evaluate(get);
    assert.equal(second.verdict.reason, "POLICY_ERROR", bad);
    if (bad === "loop") {
      // A hang costs the evaluation its fuel (bench/policy_bench.ts times evaluations).
      assert.equal(first.verdicts.find((v) => v.module === bad)?.rule, "fuel exhausted");
    } else {
      assert.equal(second.verdicts.find((v) => v.module === "baseline")?.decision, "allow", bad);
    }
  }
});

Deno.test("PolicyEngine ignores a classifier's allow: no rule allowing means deny", async () => {
  const wasm = await fixtureWasm("allow_all");
  await using engine = await PolicyEngine.create([await spec("sem", wasm, {}, "classifier")]);
  const { verdict } = await engine.evaluate(SUBMIT_FACTS);
  assert.equal(verdict.decision, "deny");
  assert.equal(verdict.reason, "NO_POLICY_ALLOWED");
});

Deno.test("PolicyEngine refuses a module whose bytes do not match the pinned hash", async () => {
  const wasm = await baselineWasm();
  const s = await spec("baseline", wasm, BASE_POLICY);
  await assert.rejects(
    () => PolicyEngine.create([{ ...s, sha256: "0".repeat(64) }]),
    /policy module failed to load/,
  );
});

Deno.test("PolicyEngine gives the same verdict for the same facts", async () => {
  const wasm = await baselineWasm();
  await using engine = await PolicyEngine.create([await spec("baseline", wasm, BASE_POLICY)]);
  const first = await engine.evaluate(SUBMIT_FACTS);
  for (let i = 0; i < 50; i++) assert.deepEqual(await engine.evaluate(SUBMIT_FACTS), first);
});

Deno.test("checkWasmSandbox() refuses foreign imports and missing memory caps", async () => {
  const { checkWasmSandbox } = await import("./wasm_sandbox.ts");
  const base = await baselineWasm();
  checkWasmSandbox(base, 256, "baseline");
  assert.throws(() => checkWasmSandbox(base, 16, "baseline"), /the cap is 16/);
  assert.throws(
    () => checkWasmSandbox(new Uint8Array([1, 2, 3]), 256, "x"),
    /not a WebAssembly module/,
  );
  // (module (import "wasi_snapshot_preview1" "fd_write" (func)))
  const wasi = new Uint8Array([
    0,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    1,
    4,
    1,
    0x60,
    0,
    0,
    2,
    28,
    1,
    22,
    ...new TextEncoder().encode("wasi_snapshot_preview1"),
    8,
    ...new TextEncoder().encode("fd_write"),
    0,
    0,
  ]);
  wasi[15] = wasi.length - 16;
  assert.throws(() => checkWasmSandbox(wasi, 256, "w"), /imports from "wasi_snapshot_preview1"/);
});

Deno.test("PolicyEngine answers concurrent evaluations each with its own verdict", async () => {
  const wasm = await baselineWasm();
  await using engine = await PolicyEngine.create([await spec("baseline", wasm, BASE_POLICY)]);
  const get = { ...SUBMIT_FACTS, form: { ...SUBMIT_FACTS.form!, method: "GET" } };
  // 200 at once (a page load): more than one batch, every answer matched to its facts.
  const inputs = Array.from({ length: 200 }, (_, i) => i % 3 === 0 ? SUBMIT_FACTS : get);
  const results = await Promise.all(inputs.map((f) => engine.evaluate(f)));
  results.forEach((r, i) =>
    assert.equal(r.verdict.decision, i % 3 === 0 ? "deny" : "allow", `evaluation ${i}`)
  );
});

Deno.test("PolicyEngine.setExtraAllowedOrigins() applies to the next evaluation", async () => {
  const wasm = await baselineWasm();
  await using engine = await PolicyEngine.create([await spec("baseline", wasm, BASE_POLICY)]);
  const elsewhere = {
    ...SUBMIT_FACTS,
    kind: "navigate" as const,
    method: "GET",
    form: null,
    element: null,
    target: { scheme: "http", origin: "http://other.test", path: "/" },
  };
  assert.equal((await engine.evaluate(elsewhere)).verdict.reason, "ORIGIN_NOT_ALLOWED");
  await engine.setExtraAllowedOrigins(["http://other.test"]);
  assert.equal((await engine.evaluate(elsewhere)).verdict.decision, "allow");
  await engine.setExtraAllowedOrigins([]);
  assert.equal((await engine.evaluate(elsewhere)).verdict.reason, "ORIGIN_NOT_ALLOWED");
});
