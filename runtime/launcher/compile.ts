/**
 * `deno task compile`: one self-contained `omotai` binary (`deno compile`), for machines
 * without Deno. `deno compile` fetches Deno's standalone runtime (denort) for the target
 * the first time, so it works only where that download is reachable.
 *
 * A compiled binary carries one set of permissions, fixed when it is built: it cannot start
 * itself again with fewer, as the launcher does with Deno, and the egress proxy it spawns is
 * itself again (runtime/cli/compiled_main.ts), with the same set. So the set is the union of
 * what any command line needs: `compiledFlags()`. docs/install.md says what that costs.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BROWSER_CANDIDATES, HEADLESS_SHELL_CANDIDATES } from "../../cdp/mod.ts";
import { CHILD_ENV } from "./permissions.ts";
import { PG_CLIENT_ENV } from "./database_url.ts";

const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * The permissions baked into a binary written to `output` (an absolute path: the binary runs
 * itself for the egress proxy, so its own path is in its run permission).
 */
export function compiledFlags(output: string, browser?: string): string[] {
  const env = new Set(Object.values(CHILD_ENV).flat());
  for (const name of ["OMOTAI_DATA_DIR", "XDG_STATE_HOME", "HOME", "LOCALAPPDATA"]) env.add(name);
  // A binary that opens the shared store reads what the PostgreSQL client reads.
  for (const name of PG_CLIENT_ENV) env.add(name);
  const run = [
    ...new Set([
      ...(browser ? [browser] : []),
      ...HEADLESS_SHELL_CANDIDATES,
      ...BROWSER_CANDIDATES,
      output,
    ]),
  ];
  return [
    "--no-prompt",
    // Policies, modules and the data dir are named at run time, anywhere.
    "--allow-read",
    "--allow-write",
    // The listen address is chosen at run time, and the proxy (the same binary) connects out.
    "--allow-net",
    `--allow-env=${[...env].join(",")}`,
    `--allow-run=${run.join(",")}`,
    "--allow-sys=uid,systemMemoryInfo",
  ];
}

/** The `deno compile` arguments for a binary at `output`. */
export function compileArgs(output: string, browser?: string, checkout = CHECKOUT): string[] {
  return [
    "compile",
    "--config",
    join(checkout, "deno.json"),
    "--output",
    output,
    // The bundled policy modules are files the runtime reads, not imports.
    "--include",
    join(checkout, "policies-wasm", "dist"),
    ...compiledFlags(output, browser),
    join(checkout, "runtime", "cli", "compiled_main.ts"),
  ];
}

if (import.meta.main) {
  const output = resolve(CHECKOUT, Deno.args[0] ?? "dist/omotai");
  const out = await new Deno.Command(Deno.execPath(), {
    args: compileArgs(output, Deno.env.get("OMOTAI_BROWSER")),
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (out.success) console.log(`omotai: wrote ${output}`);
  Deno.exit(out.code);
}
