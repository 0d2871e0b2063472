/**
 * A release to a package registry is one command: `deno publish --dry-run` passes with the
 * metadata of deno.json, and publishes the runtime without its tests.
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { VERSION } from "../runtime/version.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("deno publish --dry-run passes with deno.json's name, version, license and exports", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${CHECKOUT}/deno.json`));
  assert.match(config.name, /^@[a-z0-9-]+\/[a-z0-9-]+$/);
  assert.equal(config.version, VERSION, "one version: the one the runtime reports");
  assert.equal(config.license, "Apache-2.0");
  assert.deepEqual(config.exports, { ".": "./runtime/main.ts" });
  const out = await new Deno.Command(Deno.execPath(), {
    // --allow-dirty: the check is of the files, not of whether they are committed yet.
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: CHECKOUT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, text);
  assert.match(text, /Dry run complete/);
  assert.match(text, new RegExp(`Simulating publish of ${config.name}@${VERSION}`));
  const files = [...text.matchAll(/file:\/\/\S+/g)].map((m) =>
    m[0].slice(`file://${CHECKOUT}`.length)
  );
  for (
    const f of [
      "runtime/main.ts",
      "runtime/launcher/launcher.ts",
      "runtime/cli/main.ts",
      "policies-wasm/dist/baseline.wasm",
    ]
  ) {
    assert.ok(files.includes(f), `${f} is published`);
  }
  assert.deepEqual(files.filter((f) => f.startsWith("tests/") || f.endsWith("_test.ts")), []);
});
