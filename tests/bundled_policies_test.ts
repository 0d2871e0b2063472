import assert from "node:assert/strict";
import { compileModule, listModules } from "../policies-wasm/build.ts";
import { sha256Hex, verifyModule } from "../runtime/policy/signing.ts";

Deno.test("bundled policy modules verify against the project key and rebuild byte-identical", async () => {
  const projectKey = (await Deno.readTextFile("policies-wasm/keys/project.pub")).trim();
  for (const { source, manifest } of await listModules()) {
    const file = `policies-wasm/dist/${manifest.name}.wasm`;
    const wasm = await Deno.readFile(file);
    const sig = JSON.parse(await Deno.readTextFile(`${file}.sig.json`));
    const verified = await verifyModule(wasm, sig, [projectKey], manifest.name);
    assert.deepEqual(verified.manifest, manifest);
    const rebuilt = await compileModule(source);
    assert.equal(await sha256Hex(rebuilt), verified.sha256, `${manifest.name} is reproducible`);
  }
});
