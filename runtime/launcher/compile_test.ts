import assert from "node:assert/strict";
import { isProxyCommandLine } from "../cli/compiled_main.ts";
import { compileArgs, compiledFlags } from "./compile.ts";

Deno.test("compiledFlags() bakes no -A: run of the browsers and the binary itself only", () => {
  const flags = compiledFlags("/opt/omotai/omotai", "/snap/bin/chromium");
  assert.ok(!flags.includes("-A") && !flags.includes("--allow-all"));
  assert.equal(flags.filter((f) => f === "--allow-run" || f === "--allow-env").length, 0);
  assert.ok(
    flags.includes(
      "--allow-run=/snap/bin/chromium,/usr/lib/chromium/chromium-headless-shell,/usr/bin/chromium,/usr/bin/chromium-browser,/usr/bin/google-chrome,/opt/omotai/omotai",
    ),
  );
  assert.ok(flags.includes("--allow-sys=uid,systemMemoryInfo"));
  assert.ok(!flags.some((f) => f.startsWith("--allow-ffi")));
  const env = flags.find((f) => f.startsWith("--allow-env="))!;
  for (
    const name of ["OMOTAI_VAULT_KEY", "OMOTAI_DATA_DIR", "XDG_STATE_HOME", "NODE_V8_COVERAGE"]
  ) {
    assert.ok(env.split(/[=,]/).includes(name), name);
  }
});

Deno.test("compileArgs() embeds the bundled modules and compiles the compiled entry", () => {
  const args = compileArgs("/out/omotai", undefined, "/src/");
  assert.deepEqual(args.slice(0, 7), [
    "compile",
    "--config",
    "/src/deno.json",
    "--output",
    "/out/omotai",
    "--include",
    "/src/policies-wasm/dist",
  ]);
  assert.equal(args.at(-1), "/src/runtime/cli/compiled_main.ts");
});

Deno.test("isProxyCommandLine() knows the egress proxy's command line and nothing else", () => {
  const proxy = [
    "run",
    "--no-config",
    "--allow-net",
    "/tmp/deno-compile-omotai/runtime/proxy/proxy_main.ts",
  ];
  assert.equal(isProxyCommandLine(proxy), true);
  assert.equal(isProxyCommandLine(["start", "--policy", "/x/runtime/proxy/proxy_main.ts"]), false);
  assert.equal(isProxyCommandLine(["run"]), false);
  assert.equal(isProxyCommandLine([]), false);
});
