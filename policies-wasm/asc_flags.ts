/**
 * The AssemblyScript compiler's flags for every policy module, after the entry and its
 * `--outFile`.
 *
 * @module
 */

/** The same source, compiler version and flags give byte-identical WASM. */
export const ASC_FLAGS: readonly string[] = [
  "--use",
  // asc names elements by their path relative to the working directory.
  "abort=policies-wasm/lib/verdict/abortHandler",
  "--optimize",
  "--noAssert",
  // The engine refuses modules without a memory maximum (the memory cap).
  "--maximumMemory",
  "64",
];
