#!/usr/bin/env node
// deno-lint-ignore-file explicit-module-boundary-types -- plain JavaScript for Node: the
// types are in the JSDoc.
/**
 * The npm package's `omotai` command (`npx -y omotai …`): runs the launcher
 * (runtime/main.ts) with the Deno of this package's pinned `deno` dependency and the
 * launcher's own permissions, as `deno task install` does from a checkout. Node cannot exec,
 * so it stays as the launcher's parent: stdio is the launcher's, shutdown signals are passed
 * on, the exit code is the launcher's, and when Node's own parent (npx, the client) is gone
 * the launcher is told to stop.
 *
 * Plain Node ESM with no dependency but `deno`: it runs before any Deno does.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import process from "node:process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** This package's directory (the copy npm unpacked). */
export const PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The variables the launcher reads: `LAUNCHER_ENV` of runtime/launcher/permissions.ts, which
 * this script cannot import (it is TypeScript), as data: bin/launcher_env.json
 * (tests/npm_package_test.ts fails when the two differ).
 *
 * @type {string[]}
 */
export const LAUNCHER_ENV = JSON.parse(
  readFileSync(join(PACKAGE_DIR, "bin", "launcher_env.json"), "utf8"),
);

/**
 * The path of the Deno binary the `deno` dependency ships. Its own installer puts the binary
 * in the package's directory (or, where that is read-only, leaves it in the platform
 * package `@deno/<target>`); `runInstall()` returns whichever is there, as its `bin.cjs` does.
 *
 * @returns {string}
 */
export function denoPath() {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve("deno/package.json"));
  const exe = join(dir, process.platform === "win32" ? "deno.exe" : "deno");
  if (existsSync(exe)) return exe;
  return require("deno/install_api.cjs").runInstall();
}

/**
 * The `deno` arguments that run the launcher for `args`: `NPM_COPY_FLAGS` of
 * runtime/launcher/launcher.ts (npm owns the package's directory, so Deno keeps the npm
 * packages in its own cache, and fetches those the module graph needs), this copy's
 * deno.json, and the launcher's own permissions (`launcherFlags()`).
 *
 * @param {string} deno the Deno binary (the launcher may run it, and only it)
 * @param {string[]} args the command line after `omotai`
 * @param {string} [dir] the package's directory
 * @returns {string[]}
 */
export function launcherArgv(deno, args, dir = PACKAGE_DIR) {
  return [
    "run",
    "--no-prompt",
    "--node-modules-dir=none",
    "--unstable-npm-lazy-caching",
    "--config",
    join(dir, "deno.json"),
    "--allow-read",
    `--allow-env=${LAUNCHER_ENV.join(",")}`,
    `--allow-run=${deno}`,
    join(dir, "runtime", "main.ts"),
    ...args,
  ];
}

function main() {
  let deno;
  try {
    deno = denoPath();
  } catch (err) {
    // `deno` is an optional dependency (docs/install.md says why): `--omit=optional` drops it.
    console.error(
      `omotai: no Deno from the npm package deno@2.9.6 beside this package (${err.message}); ` +
        "install without --omit=optional",
    );
    return process.exit(1);
  }
  const child = spawn(deno, launcherArgv(deno, process.argv.slice(2)), { stdio: "inherit" });
  // The launcher decides what each signal means (from a terminal, Ctrl+C already reached
  // the runtime); Node only must not die of one and leave the launcher behind.
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  // A client that dies outright (or an npx shell that does not pass SIGTERM on) leaves Node
  // orphaned: its parent changes, and the launcher is told to stop.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid !== parent) child.kill("SIGTERM");
  }, 1_000);
  watch.unref();
  child.on("error", (err) => {
    console.error(`omotai: cannot run ${deno}: ${err.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    clearInterval(watch);
    process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
  });
}

// Run as the command (npm links it into .bin/), not when a test imports it.
if (process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) main();
