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
import { basename, join, relative } from "node:path";
import { FACTS_ABI_VERSION } from "../runtime/policy/facts.ts";
import { type Manifest, ManifestSchema, signModule } from "../runtime/policy/signing.ts";

const ROOT = new URL(".", import.meta.url).pathname;
const REPO = new URL("..", import.meta.url).pathname;
/** Pinned compiler: the same source and version give byte-identical WASM. */
export const ASC = "npm:assemblyscript@0.28.20/asc";

/** Compiles one module; returns the wasm bytes. */
export async function compileModule(source: string): Promise<Uint8Array> {
  const out = await Deno.makeTempFile({ suffix: ".wasm" });
  try {
    const res = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        ASC,
        relative(REPO, source),
        "--outFile",
        out,
        "--use",
        // asc names elements by their path relative to the working directory.
        "abort=policies-wasm/lib/verdict/abortHandler",
        "--optimize",
        "--noAssert",
        // The engine refuses modules without a memory maximum (the memory cap).
        "--maximumMemory",
        "64",
      ],
      stdout: "piped",
      stderr: "piped",
      cwd: REPO,
    }).output();
    if (!res.success) {
      throw new Error(`asc failed for ${source}:\n${new TextDecoder().decode(res.stderr)}`);
    }
    return await Deno.readFile(out);
  } finally {
    await Deno.remove(out).catch(() => {});
  }
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
  for (const { source, manifest } of await listModules()) {
    const wasm = await compileModule(source);
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
