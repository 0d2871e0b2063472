/**
 * Entry point of the `omotai` command: the launcher, which runs the runtime
 * (`cli/main.ts`) in a child Deno process with the permissions its command line needs.
 *
 * @module
 */
import { launch } from "./launcher/mod.ts";

if (import.meta.main) {
  Deno.exit(await launch(Deno.args, { entry: new URL("./cli/main.ts", import.meta.url) }));
}
