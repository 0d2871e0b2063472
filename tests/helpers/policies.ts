/**
 * Builds and signs policy modules for tests, with a throwaway key.
 *
 * @module
 */
import { compileModule } from "../../policies-wasm/build.ts";
import type { ModuleSpec } from "../../runtime/policy/engine.ts";
import { sha256Hex } from "../../runtime/policy/signing.ts";

const cache = new Map<string, Uint8Array>();

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
