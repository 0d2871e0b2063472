/**
 * What a policy module may be before it is loaded: it imports nothing but Extism's host
 * functions and has one memory with a declared maximum under the cap.
 *
 * @module
 */
import { WasmReader, wasmSections } from "./wasm_reader.ts";

/** The only import namespace a module may use: Extism's own host functions. */
export const ALLOWED_IMPORT_MODULE = "extism:host/env";

/**
 * Refuses a module that imports anything but Extism's host functions, imports its memory,
 * or declares no memory maximum or one above `maxPages` (the engine enforces the declared
 * maximum, so this is the memory cap).
 */
export function checkWasmSandbox(wasm: Uint8Array, maxPages: number, name: string): void {
  let memoryMax: number | undefined;
  let memories = 0;
  const fail = (why: string) => new WasmReader(wasm, 0, name).fail(why);
  for (const section of wasmSections(wasm, name)) {
    const r = new WasmReader(wasm, section.bodyStart, name);
    if (section.id === 2) {
      const count = r.u32();
      for (let i = 0; i < count; i++) {
        const mod = r.name_();
        r.name_();
        const kind = r.byte();
        if (mod !== ALLOWED_IMPORT_MODULE) {
          fail(`imports from "${mod}", only ${ALLOWED_IMPORT_MODULE} is allowed`);
        }
        if (kind === 0) r.u32();
        else fail("imports a table, memory or global");
      }
    } else if (section.id === 5) {
      const count = r.u32();
      memories += count;
      for (let i = 0; i < count; i++) {
        const flags = r.u32();
        r.u32();
        if (flags & 1) memoryMax = r.u32();
        else fail("declares no memory maximum");
      }
    }
  }
  if (memories > 1) fail("declares more than one memory");
  if (memoryMax !== undefined && memoryMax > maxPages) {
    fail(`may grow to ${memoryMax} pages; the cap is ${maxPages}`);
  }
}
