import assert from "node:assert/strict";
import { baselineWasm } from "../../tests/helpers/policies.ts";
import { seededRandom } from "../../tests/helpers/random.ts";
import { FUEL_EXPORT, meterWasm } from "./wasm_meter.ts";

const enc = new TextEncoder();
const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/** A module with one exported function "f" of type `type` and body `body`. */
function moduleWith(type: number[], body: number[], exportName = "f"): Uint8Array {
  const name = [...enc.encode(exportName)];
  return new Uint8Array([
    ...HEADER,
    0x01,
    type.length + 1,
    0x01,
    ...type,
    0x03,
    0x02,
    0x01,
    0x00,
    0x07,
    name.length + 4,
    0x01,
    name.length,
    ...name,
    0x00,
    0x00,
    0x0a,
    body.length + 2,
    0x01,
    body.length,
    ...body,
  ]);
}

// (func (param $n i32) (result i32) (local $sum i32)
//   block loop
//     local.get $n  i32.eqz  br_if 1
//     local.get $sum local.get $n i32.add local.set $sum
//     local.get $n i32.const 1 i32.sub local.set $n
//     br 0
//   end end
//   local.get $sum)
const SUM = moduleWith([0x60, 0x01, 0x7f, 0x01, 0x7f], [
  0x01,
  0x01,
  0x7f,
  0x02,
  0x40,
  0x03,
  0x40,
  0x20,
  0x00,
  0x45,
  0x0d,
  0x01,
  0x20,
  0x01,
  0x20,
  0x00,
  0x6a,
  0x21,
  0x01,
  0x20,
  0x00,
  0x41,
  0x01,
  0x6b,
  0x21,
  0x00,
  0x0c,
  0x00,
  0x0b,
  0x0b,
  0x20,
  0x01,
  0x0b,
]);

function instantiate(wasm: Uint8Array) {
  const { exports } = new WebAssembly.Instance(
    new WebAssembly.Module(wasm as Uint8Array<ArrayBuffer>),
  );
  return {
    f: exports.f as (...a: number[]) => number,
    fuel: exports[FUEL_EXPORT] as WebAssembly.Global,
  };
}

Deno.test("meterWasm() keeps behaviour and bills the function once and each loop pass", () => {
  const plain = instantiate(SUM);
  const metered = instantiate(meterWasm(SUM, 1_000));
  assert.equal(plain.f(10), 55);
  assert.equal(metered.f(10), 55);
  // 18 instructions in the body, 13 in the loop, entered 11 times.
  assert.equal(1_000 - (metered.fuel.value as number), 18 + 11 * 13);
  metered.fuel.value = 1_000;
  assert.equal(metered.f(10), 55);
  assert.equal(1_000 - (metered.fuel.value as number), 161);
});

Deno.test("meterWasm() makes an endless loop trap when the fuel runs out", () => {
  // (func (result i32) loop br 0 end i32.const 0)
  const wasm = moduleWith([0x60, 0x00, 0x01, 0x7f], [
    0x00,
    0x03,
    0x40,
    0x0c,
    0x00,
    0x0b,
    0x41,
    0x00,
    0x0b,
  ]);
  const m = instantiate(meterWasm(wasm, 100_000));
  assert.throws(() => m.f(), WebAssembly.RuntimeError);
  assert.ok((m.fuel.value as number) < 0);
  // Too little fuel for the start: the first charge traps at once.
  m.fuel.value = 0;
  assert.throws(() => m.f(), WebAssembly.RuntimeError);
});

Deno.test("meterWasm() refuses what it cannot meter", () => {
  const refuse = (wasm: Uint8Array, why: RegExp) =>
    assert.throws(
      () => meterWasm(wasm, 1_000, "m"),
      (err: Error & { code?: string }) =>
        err.code === "POLICY_MODULE_REJECTED" && why.test(err.message),
    );
  // SIMD: v128.const, which the scanner does not decode.
  refuse(moduleWith([0x60, 0x00, 0x00], [0x00, 0xfd, 0x0c, 0x0b]), /unsupported instruction 0xfd/);
  refuse(moduleWith([0x60, 0x00, 0x00], [0x00, 0x0b], FUEL_EXPORT), /reserved name/);
  refuse(SUM.subarray(0, SUM.length - 3), /truncated|does not end/);
  refuse(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]), /not a WebAssembly module/);
});

Deno.test("meterWasm() answers mutated modules with a typed refusal or a valid module, never a crash", async () => {
  const wasm = await baselineWasm();
  const next = seededRandom(0x2545f491);
  let refused = 0;
  let stillValid = 0;
  for (let i = 0; i < 300; i++) {
    const bytes = wasm.slice();
    const flips = 1 + Math.floor(next() * 4);
    for (let f = 0; f < flips; f++) {
      bytes[8 + Math.floor(next() * (bytes.length - 8))] = Math.floor(next() * 256);
    }
    const valid = WebAssembly.validate(bytes as Uint8Array<ArrayBuffer>);
    try {
      const out = meterWasm(bytes, 1_000, "mutant");
      // A module the engine could run before metering still validates after it.
      if (valid) assert.ok(WebAssembly.validate(out as Uint8Array<ArrayBuffer>), `mutant ${i}`);
      stillValid += valid ? 1 : 0;
    } catch (err) {
      assert.equal((err as { code?: string }).code, "POLICY_MODULE_REJECTED", String(err));
      refused++;
    }
  }
  assert.ok(refused > 0, "some mutations must be refused");
  assert.ok(stillValid > 0, "some mutations must stay valid and be metered");
});
