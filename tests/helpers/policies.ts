/**
 * Builds and signs policy modules for tests, with a throwaway key, and finds the bundled
 * baseline module by this file's URL, so no test depends on the directory it is run from.
 *
 * @module
 */
import { join } from "node:path";
import { compileModules } from "../../policies-wasm/build.ts";
import { ASC_FLAGS } from "../../policies-wasm/asc_flags.ts";
import type { ModuleSpec } from "../../runtime/policy/engine.ts";
import { sha256Hex } from "../../runtime/policy/signing.ts";

const cache = new Map<string, Promise<Uint8Array>>();
const ROOT = new URL("../../", import.meta.url);
/**
 * Compiled modules kept between test processes (a compile is a second or more of CPU, and
 * several files compile the same fixtures), each under the hash of all that makes its bytes:
 * the compiler's flags, deno.json (which pins the compiler and `@extism/as-pdk`), the source,
 * and every file of the shared library and of the fixtures it may import.
 */
const DISK = join(Deno.env.get("TMPDIR") ?? "/tmp", "omotai-test-policies");
const IMPORTED = ["policies-wasm/lib", "tests/fixtures/policies"];

/** The hash of everything the bytes of `path` compiled are made from. */
async function inputsHash(path: string): Promise<string> {
  const files = ["deno.json", path];
  for (const dir of IMPORTED) {
    const names: string[] = [];
    for await (const e of Deno.readDir(new URL(dir, ROOT))) {
      if (e.isFile && e.name.endsWith(".ts")) names.push(`${dir}/${e.name}`);
    }
    files.push(...names.sort());
  }
  const parts = [JSON.stringify(ASC_FLAGS)];
  for (const f of files) parts.push(f, await Deno.readTextFile(new URL(f, ROOT)));
  return await sha256Hex(new TextEncoder().encode(parts.join("\0")));
}

/** Compiles `paths` (none compiled before), each found on disk under its hash or compiled. */
async function compileOrReuse(paths: readonly string[]): Promise<Uint8Array[]> {
  const hashes = await Promise.all(paths.map(inputsHash));
  const found = await Promise.all(
    hashes.map((h) => Deno.readFile(join(DISK, `${h}.wasm`)).catch(() => undefined)),
  );
  const todo = paths.filter((_, i) => !found[i] || !WebAssembly.validate(found[i]!));
  const built = await compileModules(
    todo.map((p) => new URL(p, ROOT).pathname),
  );
  await Deno.mkdir(DISK, { recursive: true });
  return await Promise.all(paths.map(async (p, i) => {
    const at = todo.indexOf(p);
    if (at < 0) return found[i]!;
    // Whole or not at all: another test process may read it at any time.
    const tmp = join(DISK, `${hashes[i]}.${crypto.randomUUID()}.tmp`);
    await Deno.writeFile(tmp, built[at]);
    await Deno.rename(tmp, join(DISK, `${hashes[i]}.wasm`));
    return built[at];
  }));
}

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
  return (await testModulesWasm([path]))[0];
}

/**
 * Compiles each of `paths` as {@link testModuleWasm} does, those compiled neither in this
 * process nor before with the same inputs in one compiler process (it loads the compiler once
 * for all of them); their bytes in order.
 */
export function testModulesWasm(paths: readonly string[]): Promise<Uint8Array[]> {
  const missing = [...new Set(paths.filter((p) => !cache.has(p)))];
  if (missing.length > 0) {
    const built = compileOrReuse(missing);
    missing.forEach((p, i) => {
      const one = built.then((all) => all[i]);
      cache.set(p, one);
      // A failed compile is tried again by the next caller, not handed on.
      one.catch(() => cache.delete(p));
    });
  }
  return Promise.all(paths.map((p) => cache.get(p)!));
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
