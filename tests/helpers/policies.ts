/**
 * Builds and signs policy modules for tests, with a throwaway key, and finds the bundled
 * baseline module by this file's URL, so no test depends on the directory it is run from.
 *
 * @module
 */
import { compileModule } from "../../policies-wasm/build.ts";
import type { ModuleSpec } from "../../runtime/policy/engine.ts";
import { sha256Hex } from "../../runtime/policy/signing.ts";

const cache = new Map<string, Uint8Array>();

/** The bytes of the bundled module `name`, as `deno task build:policies` writes it. */
export function bundledWasm(name: string): Promise<Uint8Array> {
  return Deno.readFile(new URL(`../../policies-wasm/dist/${name}.wasm`, import.meta.url));
}

/** The bytes of the bundled baseline module: a fresh copy each call, so a test may change it. */
export function baselineWasm(): Promise<Uint8Array> {
  return bundledWasm("baseline");
}

/** The signature file of the bundled baseline module. */
export const BASELINE_SIG: URL = new URL(
  "../../policies-wasm/dist/baseline.wasm.sig.json",
  import.meta.url,
);

/** Compiles `tests/fixtures/policies/<name>.ts` or `policies-wasm/modules/<name>.ts`. */
export async function testModuleWasm(path: string): Promise<Uint8Array> {
  let wasm = cache.get(path);
  if (!wasm) {
    wasm = await compileModule(new URL(`../../${path}`, import.meta.url).pathname);
    cache.set(path, wasm);
  }
  return wasm;
}

/** A module spec for the engine. */
export async function spec(
  name: string,
  wasm: Uint8Array,
  config: unknown = {},
  kind: ModuleSpec["kind"] = "rule",
): Promise<ModuleSpec> {
  return { name, kind, wasm, sha256: await sha256Hex(wasm), config: JSON.stringify(config) };
}
