import assert from "node:assert/strict";
import { compileModules, listModules } from "../policies-wasm/build.ts";
import { sha256Hex, verifyModule } from "../runtime/policy/signing.ts";

/** The modules the repo ships, by manifest name. */
const SHIPPED = ["baseline", "no-third-party-forms", "path-allowlist"];

Deno.test("listModules() finds exactly the shipped modules, each built in dist/", async () => {
  const modules = await listModules();
  assert.deepEqual(modules.map((m) => m.manifest.name), SHIPPED);
  const dist: string[] = [];
  for await (const e of Deno.readDir("policies-wasm/dist")) {
    if (e.name.endsWith(".wasm")) dist.push(e.name.replace(/\.wasm$/, ""));
  }
  assert.deepEqual(dist.sort(), SHIPPED);
});

Deno.test("verifyModule() accepts every bundled module under the project key, and compileModules() rebuilds it byte-identical", async () => {
  const projectKey = (await Deno.readTextFile("policies-wasm/keys/project.pub")).trim();
  const checked: string[] = [];
  const modules = await listModules();
  // One compiler process for every module, as `deno task build:policies` builds them.
  const rebuilt = await compileModules(modules.map((m) => m.source));
  for (const [i, { manifest }] of modules.entries()) {
    const file = `policies-wasm/dist/${manifest.name}.wasm`;
    const wasm = await Deno.readFile(file);
    const sig = JSON.parse(await Deno.readTextFile(`${file}.sig.json`));
    const verified = await verifyModule(wasm, sig, [projectKey], manifest.name);
    assert.deepEqual(verified.manifest, manifest);
    assert.equal(await sha256Hex(rebuilt[i]), verified.sha256, `${manifest.name} is reproducible`);
    checked.push(manifest.name);
  }
  assert.deepEqual(checked, SHIPPED);
});
