/**
 * The npm package (`npx -y omotai`): package.json names the bin and pins Deno; `npm pack` holds
 * every module the launcher, the runtime and the egress proxy load and nothing of the tests; the
 * bin runs the launcher with the launcher's own flags; the README states the packed size.
 * tests/readme_clients_test.ts runs the packed package end to end.
 *
 * @module
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { LAUNCHER_ENV as BIN_ENV, launcherArgv } from "../bin/omotai.mjs";
import { installedByNpm, launcherFlags, NPM_COPY_FLAGS } from "../runtime/launcher/launcher.ts";
import { LAUNCHER_ENV } from "../runtime/launcher/permissions.ts";
import { VERSION } from "../runtime/version.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));

/** What `npm pack --dry-run --json` reports of this checkout. */
async function dryPack(): Promise<{ size: number; files: string[] }> {
  const out = await new Deno.Command("npm", {
    args: ["pack", "--dry-run", "--json"],
    cwd: CHECKOUT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const [report] = JSON.parse(new TextDecoder().decode(out.stdout));
  return { size: report.size, files: report.files.map((f: { path: string }) => f.path) };
}

/** The checkout's files (relative) in the module graph of `entry`. */
async function localModules(entry: string): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: CHECKOUT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout));
  return (graph.modules as { specifier: string }[])
    .map((m) => m.specifier)
    .filter((s) => s.startsWith(`file://${CHECKOUT}`))
    .map((s) => s.slice(`file://${CHECKOUT}`.length));
}

Deno.test("package.json names the omotai bin, the runtime's version and the pinned Deno", async () => {
  const pkg = JSON.parse(await Deno.readTextFile(`${CHECKOUT}/package.json`));
  const deno = JSON.parse(await Deno.readTextFile(`${CHECKOUT}/deno.json`));
  assert.equal(pkg.name, "omotai");
  assert.equal(pkg.version, VERSION);
  assert.equal(pkg.license, deno.license);
  assert.deepEqual(pkg.bin, { omotai: "bin/omotai.mjs" });
  // The Deno every README line runs (`npx -y deno@2.9.6`), exact. An optional dependency:
  // npm installs it, while Deno, which reads a package.json's dependencies as its own, does
  // not fetch a second Deno into the checkout.
  assert.deepEqual(pkg.optionalDependencies, { deno: "2.9.6" });
  assert.equal(pkg.dependencies, undefined);
  const readme = await Deno.readTextFile(`${CHECKOUT}/README.md`);
  assert.ok(readme.includes("npx -y deno@2.9.6 task start"));
});

Deno.test("launcherArgv() runs the launcher with launcherFlags() and NPM_COPY_FLAGS", () => {
  assert.deepEqual(BIN_ENV, [...LAUNCHER_ENV]);
  const argv = launcherArgv("/d/deno", ["start", "--policy", "/p.yaml"], "/pkg");
  assert.deepEqual(argv, [
    "run",
    "--no-prompt",
    ...NPM_COPY_FLAGS,
    "--config",
    "/pkg/deno.json",
    ...launcherFlags("/d/deno"),
    "/pkg/runtime/main.ts",
    "start",
    "--policy",
    "/p.yaml",
  ]);
});

Deno.test("installedByNpm() holds for a copy under node_modules/, not for a checkout", () => {
  assert.equal(installedByNpm(new URL("file:///home/u/.npm/_npx/ab/node_modules/omotai/")), true);
  assert.equal(installedByNpm(new URL("file:///usr/lib/node_modules/omotai/")), true);
  assert.equal(installedByNpm(new URL("file:///home/u/src/omotai/")), false);
  assert.equal(installedByNpm(new URL("https://example.com/node_modules/omotai/")), false);
  assert.equal(installedByNpm(new URL(`file://${CHECKOUT}`)), false);
});

Deno.test("npm pack holds every module the launcher, runtime and proxy load, no test, and the README says its size", async () => {
  const { size, files } = await dryPack();
  for (
    const entry of ["runtime/main.ts", "runtime/cli/main.ts", "runtime/proxy/proxy_main.ts"]
  ) {
    for (const file of await localModules(entry)) {
      assert.ok(files.includes(file), `${file} (loaded from ${entry}) is packed`);
    }
  }
  for (
    const f of [
      "bin/omotai.mjs",
      "bin/launcher_env.json",
      "deno.json",
      "deno.lock",
      "README.md",
      "package.json",
      "policies-wasm/dist/baseline.wasm",
      "policies-wasm/dist/baseline.wasm.sig.json",
      "runtime/demo/demo_policy.yaml",
    ]
  ) {
    assert.ok(files.includes(f), `${f} is packed`);
  }
  assert.deepEqual(
    files.filter((f) =>
      /(^|\/)(tests|bench|docs|testdata|node_modules)\//.test(f) || f.endsWith("_test.ts")
    ),
    [],
  );
  const readme = (await Deno.readTextFile(`${CHECKOUT}/README.md`)).replaceAll(/\s+/g, " ");
  const stated = readme.match(/npm package \((\d+(?:\.\d+)?) MB packed\)/);
  assert.ok(stated, "the README states the package's size");
  const mb = size / 1e6;
  assert.ok(Math.abs(mb - Number(stated[1])) <= 0.1, `packed: ${mb.toFixed(2)} MB`);
});
