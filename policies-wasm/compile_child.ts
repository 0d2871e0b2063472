/**
 * The compiler process of `compileModules()` (build.ts): compiles each `SOURCE OUT` pair of its
 * arguments in turn with the pinned AssemblyScript compiler, loaded once for all of them. Run
 * from the repository root, as asc names elements by their path relative to it.
 *
 * @module
 */
import { createMemoryStream, main } from "assemblyscript/asc";
import { ASC_FLAGS } from "./asc_flags.ts";

if (import.meta.main) {
  for (let i = 0; i + 1 < Deno.args.length; i += 2) {
    const [source, out] = [Deno.args[i], Deno.args[i + 1]];
    const stderr = createMemoryStream();
    // One at a time: Binaryen's options are process-wide.
    const res = await main([source, "--outFile", out, ...ASC_FLAGS], {
      stdout: createMemoryStream(),
      stderr,
    });
    if (res.error) {
      console.error(`asc failed for ${source}: ${res.error.message}\n${stderr.toString()}`);
      Deno.exit(1);
    }
  }
}
