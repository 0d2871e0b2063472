/**
 * Builds the policy modules in policies-wasm/modules/ to WASM with AssemblyScript, and signs
 * them when a key is given.
 *
 *   deno task build:policies [--sign KEY.json] [--out DIR]
 *
 * A module is `modules/<name>.ts` plus `modules/<name>.manifest.json` (name, version, kind).
 *
 * @module
 */
import { parseArgs } from "node:util";
import { Buffer } from "node:buffer";
import { basename, join, relative } from "node:path";
import { FACTS_ABI_VERSION } from "../runtime/policy/facts.ts";
import { type Manifest, ManifestSchema, signModule } from "../runtime/policy/signing.ts";

const ROOT = new URL(".", import.meta.url).pathname;
const REPO = new URL("..", import.meta.url).pathname;

/**
 * Compiles one module; returns the wasm bytes. The compiler is the one deno.json pins
 * (`assemblyscript`): the same source, version and flags (asc_flags.ts) give byte-identical WASM.
 */
export async function compileModule(source: string): Promise<Uint8Array> {
  return (await compileModules([source]))[0];
}

/**
 * Compiles `sources` in one compiler process (compile_child.ts), which loads the compiler once
 * for all of them; returns their wasm bytes in order.
 */
export async function compileModules(sources: readonly string[]): Promise<Uint8Array[]> {
  if (sources.length === 0) return [];
  const res = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "compile_child.ts"), ...sources.map((s) => relative(REPO, s))],
    stdout: "piped",
    stderr: "piped",
    cwd: REPO,
  }).output();
  const lines = new TextDecoder().decode(res.stdout).split("\n").filter((l) => l !== "");
  if (!res.success || lines.length !== sources.length) {
    throw new Error(
      `asc failed for ${sources.join(", ")}:\n${new TextDecoder().decode(res.stderr)}`,
    );
  }
  return lines.map((l) => new Uint8Array(Buffer.from(l, "base64")));
}

/** The modules found under modules/, with their manifests. */
export async function listModules(): Promise<{ source: string; manifest: Manifest }[]> {
  const found: { source: string; manifest: Manifest }[] = [];
  for await (const e of Deno.readDir(join(ROOT, "modules"))) {
    if (!e.name.endsWith(".manifest.json")) continue;
    const stem = e.name.replace(/\.manifest\.json$/, "");
    const raw = JSON.parse(await Deno.readTextFile(join(ROOT, "modules", e.name)));
    const manifest = ManifestSchema.parse({ ...raw, abi: FACTS_ABI_VERSION });
    found.push({ source: join(ROOT, "modules", `${stem}.ts`), manifest });
  }
  return found.sort((a, b) => a.manifest.name.localeCompare(b.manifest.name));
}

/** `build [--sign KEY.json] [--out DIR]`. */
export async function buildPolicies(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { sign: { type: "string" }, out: { type: "string", default: join(ROOT, "dist") } },
  });
  await Deno.mkdir(values.out, { recursive: true });
  const key = values.sign ? JSON.parse(await Deno.readTextFile(values.sign)) : undefined;
  const modules = await listModules();
  const built = await compileModules(modules.map((m) => m.source));
  for (const [i, { manifest }] of modules.entries()) {
    const wasm = built[i];
    const file = join(values.out, `${manifest.name}.wasm`);
    await Deno.writeFile(file, wasm);
    if (key) {
      const sig = await signModule(wasm, manifest, key.private_key, key.public_key);
      await Deno.writeTextFile(`${file}.sig.json`, JSON.stringify(sig, null, 2) + "\n");
    }
    console.log(`built ${basename(file)} (${wasm.length} bytes)${key ? ", signed" : ""}`);
  }
}

if (import.meta.main) await buildPolicies(Deno.args);
