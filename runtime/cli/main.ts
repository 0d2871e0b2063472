/**
 * Entry point of the runtime's own process, which the launcher (`runtime/main.ts`) starts
 * with the permissions of its command line. Run alone, it has whatever `deno run` gave it.
 *
 * @module
 */
import { main } from "./cli.ts";
import { installLastResort } from "./last_resort.ts";

if (import.meta.main) {
  installLastResort();
  Deno.exit(await main(Deno.args));
}
