/**
 * A bounds-checked reader of the WebAssembly binary format, shared by the sandbox check and
 * the fuel meter. Every malformation is a `POLICY_MODULE_REJECTED` error naming the module.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";

/** One section of a module: its id and where it starts, where its body starts and ends. */
export interface WasmSection {
  id: number;
  start: number;
  bodyStart: number;
  end: number;
}

/** Reads LEB128 numbers, names and bytes from a position in a module. */
export class WasmReader {
  pos: number;

  constructor(readonly bytes: Uint8Array, pos = 0, readonly name = "module") {
    this.pos = pos;
  }

  /** Throws the module's refusal. */
  fail(why: string): never {
    throw new OmotaiError("POLICY_MODULE_REJECTED", `${this.name}: ${why}`);
  }

  byte(): number {
    if (this.pos >= this.bytes.length) this.fail("truncated module");
    return this.bytes[this.pos++];
  }

  u32(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 35) this.fail("bad LEB128");
    }
  }

  /** Skips a signed or unsigned LEB128 of at most `maxBytes`. */
  skipLeb(maxBytes: number): void {
    for (let i = 0; i < maxBytes; i++) if ((this.byte() & 0x80) === 0) return;
    this.fail("bad LEB128");
  }

  skip(n: number): void {
    if (this.pos + n > this.bytes.length) this.fail("truncated module");
    this.pos += n;
  }

  /** A length-prefixed UTF-8 name. */
  name_(): string {
    const len = this.u32();
    const start = this.pos;
    this.skip(len);
    return new TextDecoder().decode(this.bytes.subarray(start, start + len));
  }
}

/** The sections of `wasm`, after checking its magic number. */
export function wasmSections(wasm: Uint8Array, name = "module"): WasmSection[] {
  const r = new WasmReader(wasm, 0, name);
  if (
    wasm.length < 8 || wasm[0] !== 0 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d
  ) {
    r.fail("not a WebAssembly module");
  }
  const out: WasmSection[] = [];
  r.pos = 8;
  while (r.pos < wasm.length) {
    const start = r.pos;
    const id = r.byte();
    const size = r.u32();
    const bodyStart = r.pos;
    r.skip(size);
    out.push({ id, start, bodyStart, end: r.pos });
  }
  return out;
}
