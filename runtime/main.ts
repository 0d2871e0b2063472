/**
 * Entry point of the `omotai` command.
 *
 * @module
 */
import { main } from "./cli/cli.ts";

if (import.meta.main) Deno.exit(await main(Deno.args));
