/**
 * The compiler process of `compileModules()` (build.ts): compiles each source of its arguments
 * in turn with the pinned AssemblyScript compiler, loaded once for all of them, and writes the
 * bytes of each as a line of base64 on stdout (no file: the caller may write only where its
 * command line names). Run from the repository root, as asc names elements by their path
 * relative to it.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createMemoryStream, main } from "assemblyscript/asc";
import { ASC_FLAGS } from "./asc_flags.ts";

if (import.meta.main) {
  const lines: string[] = [];
  // One at a time: Binaryen's options are process-wide.
  for (const source of Deno.args) {
    const stderr = createMemoryStream();
    let wasm: Uint8Array | undefined;
    const res = await main([source, "--outFile", "module.wasm", ...ASC_FLAGS], {
      stdout: createMemoryStream(),
      stderr,
      // The bytes are kept here; the name is never written.
      writeFile: (name: string, contents: Uint8Array | string) => {
        if (name === "module.wasm" && typeof contents !== "string") wasm = contents.slice();
      },
    });
    if (res.error || !wasm) {
      console.error(`asc failed for ${source}: ${res.error?.message}\n${stderr.toString()}`);
      Deno.exit(1);
    }
    lines.push(Buffer.from(wasm).toString("base64"));
  }
  await Deno.stdout.write(new TextEncoder().encode(lines.join("\n") + "\n"));
}
