/**
 * Entry point of the compiled binary (`deno task compile`). There is no Deno beside a
 * compiled binary, so the runtime runs in this one process, and the egress proxy, which the
 * runtime spawns as `Deno.execPath() run … proxy_main.ts`, is this binary again: those
 * arguments start the proxy instead of the command line.
 *
 * @module
 */
import { main } from "./cli.ts";

/** Whether `args` are the egress proxy's command line (runtime/egress/egress_proxy.ts). */
export function isProxyCommandLine(args: readonly string[]): boolean {
  const last = args.at(-1)?.replaceAll("\\", "/") ?? "";
  return args[0] === "run" && last.endsWith("/runtime/proxy/proxy_main.ts");
}

if (import.meta.main) {
  if (isProxyCommandLine(Deno.args)) await import("../proxy/proxy_main.ts");
  else Deno.exit(await main(Deno.args));
}
