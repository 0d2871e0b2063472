import assert from "node:assert/strict";
import createPlugin from "@extism/extism";
import { listModules } from "../../policies-wasm/build.ts";
import { baselineWasm, bundledWasm, testModulesWasm } from "../../tests/helpers/policies.ts";
import { seededRandom } from "../../tests/helpers/random.ts";
import { parseCaseFile } from "./case_runner.ts";
import { KernelModule } from "./kernel_host.ts";

const LIMITS = { fuel: 20_000_000, hostBytes: 4 << 20 };
const enc = new TextEncoder();

/** The fixture modules this file runs, compiled in one compiler process for all its tests. */
const FIXTURES = ["hostile", "loop"];
async function fixtureWasm(name: string): Promise<Uint8Array> {
  const all = await testModulesWasm(FIXTURES.map((f) => `tests/fixtures/policies/${f}.ts`));
  return all[FIXTURES.indexOf(name)];
}

Deno.test("KernelModule gives the Extism SDK's output for every case of every shipped module", async () => {
  let compared = 0;
  for (const { source, manifest } of await listModules()) {
    const wasm = await bundledWasm(manifest.name);
    const { config, cases } = parseCaseFile(
      await Deno.readTextFile(source.replace(/\.ts$/, ".cases.yaml")),
    );
    const policy = JSON.stringify(config);
    const ours = await KernelModule.load(wasm, { policy }, LIMITS, manifest.name);
    // The reference: the official Extism JS SDK, on the unmetered bytes.
    const extism = await createPlugin({ wasm: [{ data: wasm }], config: { policy } }, {
      useWasi: false,
      runInWorker: false,
      config: { policy },
    });
    try {
      for (const c of cases) {
        if (!c.facts.ok) continue;
        const input = JSON.stringify(c.facts.value);
        const theirs = (await extism.call("verdict", input))?.text();
        await extism.reset();
        const mine = ours.call(enc.encode(input));
        assert.ok(mine.ok, `${manifest.name}: ${c.name}`);
        assert.equal(mine.output, theirs, `${manifest.name}: ${c.name}`);
        compared++;
      }
    } finally {
      await extism.close();
    }
  }
  assert.ok(compared >= 50, `compared ${compared} cases`);
});

Deno.test("KernelModule keeps answering after 30,000 calls (no per-call state survives)", async () => {
  const wasm = await bundledWasm("no-third-party-forms");
  const m = await KernelModule.load(wasm, { policy: "{}" }, LIMITS);
  const input = enc.encode(JSON.stringify({ abi: 1, kind: "snapshot", form: null }));
  const first = m.call(input);
  for (let i = 0; i < 30_000; i++) m.call(input);
  assert.deepEqual(m.call(input), first);
  assert.ok(first.ok);
});

Deno.test("KernelModule contains traps, hoarding, wild host reads and silence to one call", async () => {
  const m = await KernelModule.load(
    await fixtureWasm("hostile"),
    {},
    LIMITS,
    "hostile",
  );
  const call = (s: string) => m.call(enc.encode(s));
  assert.deepEqual(call("fine"), { ok: true, output: '{"decision":"allow","reason":"OK"}' });
  for (const bad of ["boom", "hoard", "peek", "deep"]) {
    assert.deepEqual(call(bad), { ok: false, failure: "trap" }, bad);
    // The next call runs on a fresh instance and answers.
    assert.equal(call("fine").ok, true, `after ${bad}`);
  }
  assert.deepEqual(call("silent"), { ok: false, failure: "no output" });
  // Logging is allowed and dropped.
  assert.deepEqual(call("log"), { ok: true, output: '{"decision":"allow","reason":"LOGGED"}' });
  // A block is zero when handed out: nothing of the previous call's output can be read back.
  call("fine");
  assert.deepEqual(call("stale"), {
    ok: true,
    output: '{"decision":"allow","reason":"STALE_0"}',
  });
});

Deno.test("KernelModule stops runaway loops, recursion and bulk fills by fuel, the same bill for the same calls", async () => {
  const m = await KernelModule.load(
    await fixtureWasm("hostile"),
    {},
    { ...LIMITS, fuel: 2_000_000 },
    "hostile",
  );
  for (const runaway of ["fib", "fill"]) {
    assert.deepEqual(m.call(enc.encode(runaway)), { ok: false, failure: "fuel" }, runaway);
    assert.equal(m.call(enc.encode("fine")).ok, true, `after ${runaway}`);
  }
  const loop = await KernelModule.load(
    await fixtureWasm("loop"),
    {},
    { ...LIMITS, fuel: 2_000_000 },
    "loop",
  );
  assert.deepEqual(loop.call(enc.encode("{}")), { ok: false, failure: "fuel" });
  // The bill depends only on the inputs a module has seen (its allocator's history): two
  // fresh instances fed the same calls pay the same, call by call.
  const wasm = await fixtureWasm("hostile");
  const a = await KernelModule.load(wasm, {}, LIMITS, "a");
  const b = await KernelModule.load(wasm, {}, LIMITS, "b");
  for (let i = 0; i < 200; i++) {
    const input = enc.encode(i % 7 === 0 ? "boom" : `fine ${i}`);
    assert.deepEqual(a.call(input), b.call(input));
    assert.equal(a.fuelUsed, b.fuelUsed, `call ${i}`);
  }
});

Deno.test("KernelModule.load() refuses a module that imports a capability the kernel lacks", async () => {
  // (module (import "extism:host/env" "http_request" (func (param i64 i64) (result i64)))
  //         (memory 1 1) (func (export "verdict") (result i32) i32.const 0))
  const wasm = new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    0x01,
    0x0b,
    0x02,
    0x60,
    0x02,
    0x7e,
    0x7e,
    0x01,
    0x7e,
    0x60,
    0x00,
    0x01,
    0x7f,
    0x02,
    0x20,
    0x01,
    0x0f,
    ...enc.encode("extism:host/env"),
    0x0c,
    ...enc.encode("http_request"),
    0x00,
    0x00,
    0x03,
    0x02,
    0x01,
    0x01,
    0x05,
    0x04,
    0x01,
    0x01,
    0x01,
    0x01,
    0x07,
    0x0b,
    0x01,
    0x07,
    ...enc.encode("verdict"),
    0x00,
    0x01,
    0x0a,
    0x06,
    0x01,
    0x04,
    0x00,
    0x41,
    0x00,
    0x0b,
  ]);
  await assert.rejects(
    () => KernelModule.load(wasm, {}, LIMITS, "greedy"),
    (err: Error & { code?: string }) =>
      err.code === "POLICY_MODULE_REJECTED" &&
      /greedy: imports http_request, which policy modules do not get: .*no network/.test(
        err.message,
      ),
  );
});

Deno.test("KernelModule answers hostile facts bytes with a deny or a failure, never an allow or a crash", async () => {
  const wasm = await baselineWasm();
  const m = await KernelModule.load(
    wasm,
    { policy: JSON.stringify({ allowed_origins: ["https://portal.test"], read_only: true }) },
    LIMITS,
  );
  const next = seededRandom(0x9e3779b9);
  const valid = JSON.stringify({
    abi: 1,
    kind: "navigate",
    target: { scheme: "https", origin: "https://portal.test", path: "/" },
    method: "GET",
  });
  for (let i = 0; i < 500; i++) {
    const bytes = enc.encode(valid);
    // Truncate, flip and splice: broken JSON, wrong types, stray quotes and escapes.
    const cut = i % 3 === 0 ? Math.floor(next() * bytes.length) : bytes.length;
    const input = bytes.slice(0, cut);
    for (let f = 0; f < 3; f++) input[Math.floor(next() * input.length)] = Math.floor(next() * 128);
    const r = m.call(input);
    if (r.ok) {
      const out = JSON.parse(r.output) as { decision: string };
      // Garbage may still spell the allowed facts; anything else must not be allowed.
      if (out.decision === "allow") {
        assert.doesNotThrow(
          () => JSON.parse(new TextDecoder().decode(input)),
          `input ${i}: ${new TextDecoder().decode(input)}`,
        );
      }
    }
  }
  assert.equal(m.call(enc.encode(valid)).ok, true);
  // A kind the module does not know is denied, never allowed by falling through.
  const unknown = m.call(enc.encode(JSON.stringify({ abi: 1, kind: "upload", form: null })));
  assert.deepEqual(unknown, {
    ok: true,
    output: '{"decision":"deny","reason":"POLICY_ERROR","rule":"unknown kind"}',
  });
});
