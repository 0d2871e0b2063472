/**
 * Fuel metering for policy modules: rewrites a verified module so that every function entry
 * and every loop iteration pays, from an exported i32 global, the number of instructions of
 * the body it enters, and every bulk memory or table operation pays for its length. A module
 * that runs out traps. Because the bill is static, a call's cost depends only on its input:
 * the same facts always give the same verdict, on an idle or a loaded machine, and a module
 * that loops is stopped on the calling thread without a watchdog.
 *
 * Why the bill is an upper bound: structured control flow only jumps backwards at `loop`,
 * so between two charge points (a function entry or a loop header) each instruction of the
 * enclosing body runs at most once.
 *
 * @module
 */
import { WasmReader, wasmSections } from "./wasm_reader.ts";

/** Name of the exported fuel global added to a metered module. */
export const FUEL_EXPORT = "__omotai_fuel";

/** Bulk operations (0xFC sub-opcodes) whose last operand is a length: charged per 256 units. */
const BULK_LENGTH_OPS = new Set([8, 10, 11, 12, 14, 15, 17]);
/** Bytes (or table entries) one unit of fuel pays for in a bulk operation. */
const BULK_SHIFT = 8;

/** Section ids in the order the binary format requires (custom sections aside). */
const SECTION_ORDER = [1, 2, 3, 4, 5, 13, 6, 7, 8, 9, 12, 10, 11];

/** Growable byte buffer. */
class Writer {
  #buf = new Uint8Array(1024);
  length = 0;
  #room(n: number): void {
    if (this.length + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.#buf.subarray(0, this.length));
    this.#buf = next;
  }
  bytes(b: ArrayLike<number>): this {
    this.#room(b.length);
    this.#buf.set(b, this.length);
    this.length += b.length;
    return this;
  }
  u32(v: number): this {
    const out: number[] = [];
    do {
      let b = v % 128;
      v = Math.floor(v / 128);
      if (v > 0) b |= 0x80;
      out.push(b);
    } while (v > 0);
    return this.bytes(out);
  }
  /** Signed LEB128 of a non-negative 32-bit value. */
  s32(v: number): this {
    const out: number[] = [];
    for (;;) {
      const b = v & 0x7f;
      v = Math.floor(v / 128);
      if (v === 0 && (b & 0x40) === 0) {
        out.push(b);
        return this.bytes(out);
      }
      out.push(b | 0x80);
    }
  }
  done(): Uint8Array {
    return this.#buf.slice(0, this.length);
  }
}

/** A function body's instructions, with the places that must pay. */
interface BodyScan {
  /** Offset just after the locals declaration. */
  codeStart: number;
  /** Instruction count of the whole body. */
  total: number;
  /** For each loop: offset just after its block type, and its instruction count. */
  loops: { at: number; cost: number }[];
  /** Offsets of bulk operations charged by length (the 0xFC prefix byte). */
  bulk: number[];
}

/** Skips a block type: 0x40, a value type, or a type index (s33). */
function skipBlockType(r: WasmReader): void {
  const b = r.bytes[r.pos];
  if (b === 0x40 || (b >= 0x6f && b <= 0x7f)) {
    r.pos++;
    return;
  }
  r.skipLeb(5);
}

/** Walks one body's instructions; refuses opcodes it does not know (it cannot meter them). */
function scanBody(r: WasmReader, end: number): BodyScan {
  const groups = r.u32();
  for (let i = 0; i < groups; i++) {
    r.u32();
    r.byte();
  }
  const scan: BodyScan = { codeStart: r.pos, total: 0, loops: [], bulk: [] };
  // Open blocks: for a loop, its index in scan.loops; -1 for block/if/function.
  const open: number[] = [-1];
  const openCounts: number[] = [0];
  while (r.pos < end) {
    const at = r.pos;
    const op = r.byte();
    for (let i = 0; i < openCounts.length; i++) openCounts[i]++;
    scan.total++;
    if (op === 0x02 || op === 0x04) {
      skipBlockType(r);
      open.push(-1);
      openCounts.push(0);
    } else if (op === 0x03) {
      skipBlockType(r);
      scan.loops.push({ at: r.pos, cost: 0 });
      open.push(scan.loops.length - 1);
      openCounts.push(0);
    } else if (op === 0x0b) {
      const loop = open.pop();
      const count = openCounts.pop() ?? 0;
      if (loop === undefined) r.fail(`unbalanced end at ${at}`);
      if (loop >= 0) scan.loops[loop].cost = count;
      if (open.length === 0) break;
    } else if (
      op === 0x00 || op === 0x01 || op === 0x05 || op === 0x0f || op === 0x1a || op === 0x1b ||
      (op >= 0x45 && op <= 0xc4) || op === 0xd1
    ) {
      // no immediates
    } else if (op === 0x0c || op === 0x0d || op === 0x10 || op === 0x12 || op === 0xd2) {
      r.u32();
    } else if (op === 0x0e) {
      const n = r.u32();
      for (let i = 0; i <= n; i++) r.u32();
    } else if (op === 0x11 || op === 0x13) {
      r.u32();
      r.u32();
    } else if (op === 0x1c) {
      const n = r.u32();
      r.skip(n);
    } else if (op >= 0x20 && op <= 0x26) {
      r.u32();
    } else if (op >= 0x28 && op <= 0x3e) {
      r.u32();
      r.u32();
    } else if (op === 0x3f || op === 0x40) {
      r.u32();
    } else if (op === 0x41) {
      r.skipLeb(5);
    } else if (op === 0x42) {
      r.skipLeb(10);
    } else if (op === 0x43) {
      r.skip(4);
    } else if (op === 0x44) {
      r.skip(8);
    } else if (op === 0xd0) {
      r.byte();
    } else if (op === 0xfc) {
      const sub = r.u32();
      if (sub <= 7) {
        // saturating truncations: no immediates
      } else if (sub === 8 || sub === 10 || sub === 12 || sub === 14) {
        r.u32();
        r.u32();
      } else if (sub === 9 || sub === 11 || sub === 13 || (sub >= 15 && sub <= 17)) {
        r.u32();
      } else {
        r.fail(`unsupported instruction 0xfc ${sub} at ${at}`);
      }
      if (BULK_LENGTH_OPS.has(sub)) scan.bulk.push(at);
    } else {
      r.fail(`unsupported instruction 0x${op.toString(16)} at ${at}`);
    }
  }
  if (open.length !== 0 || r.pos !== end) r.fail("function body does not end where declared");
  return scan;
}

/** The charge sequence: fuel -= k; trap when it goes below zero. */
function charge(w: Writer, fuel: number, pushCost: (w: Writer) => void): void {
  w.bytes([0x23]).u32(fuel);
  pushCost(w);
  w.bytes([0x6b, 0x24]).u32(fuel); // i32.sub, global.set
  w.bytes([0x23]).u32(fuel);
  w.bytes([0x41, 0x00, 0x48, 0x04, 0x40, 0x00, 0x0b]); // i32.const 0, i32.lt_s, if, unreachable, end
}

/**
 * Returns a metered copy of `wasm`: a new mutable i32 global exported as {@link FUEL_EXPORT}
 * (initialised to `initialFuel`, which bounds the module's start-up code) is charged as the
 * module runs; at zero the module traps. Refuses modules it cannot meter.
 */
export function meterWasm(wasm: Uint8Array, initialFuel: number, name = "module"): Uint8Array {
  const all = wasmSections(wasm, name);
  const find = (id: number) => all.find((s) => s.id === id);

  // Parameter counts of the defined functions, to place the scratch local of bulk charges.
  const typeParams: number[] = [];
  const types = find(1);
  if (types) {
    const t = new WasmReader(wasm, types.bodyStart, name);
    const n = t.u32();
    for (let i = 0; i < n; i++) {
      if (t.byte() !== 0x60) t.fail("unsupported type form");
      const params = t.u32();
      t.skip(params);
      t.skip(t.u32());
      typeParams.push(params);
    }
  }
  const funcTypes: number[] = [];
  const funcs = find(3);
  if (funcs) {
    const f = new WasmReader(wasm, funcs.bodyStart, name);
    const n = f.u32();
    for (let i = 0; i < n; i++) funcTypes.push(f.u32());
  }
  let globalCount = 0;
  const globals = find(6);
  if (globals) globalCount = new WasmReader(wasm, globals.bodyStart, name).u32();
  const fuel = globalCount; // imported globals are refused by the sandbox check
  const exports = find(7);
  if (exports) {
    const e = new WasmReader(wasm, exports.bodyStart, name);
    const n = e.u32();
    for (let i = 0; i < n; i++) {
      const exportName = e.name_();
      e.byte();
      e.u32();
      if (exportName === FUEL_EXPORT) e.fail(`exports the reserved name ${FUEL_EXPORT}`);
    }
  }

  const rewritten = new Map<number, Uint8Array>();

  // Global section: existing globals plus the fuel counter.
  {
    const w = new Writer().u32(globalCount + 1);
    if (globals) {
      const g = new WasmReader(wasm, globals.bodyStart, name);
      g.u32();
      w.bytes(wasm.subarray(g.pos, globals.end));
    }
    w.bytes([0x7f, 0x01, 0x41]).s32(initialFuel).bytes([0x0b]);
    rewritten.set(6, w.done());
  }
  // Export section: existing exports plus the fuel counter.
  {
    const enc = new TextEncoder().encode(FUEL_EXPORT);
    let count = 0;
    let rest: Uint8Array = new Uint8Array(0);
    if (exports) {
      const e = new WasmReader(wasm, exports.bodyStart, name);
      count = e.u32();
      rest = wasm.subarray(e.pos, exports.end);
    }
    const w = new Writer().u32(count + 1).bytes(rest).u32(enc.length).bytes(enc).bytes([0x03])
      .u32(fuel);
    rewritten.set(7, w.done());
  }
  // Code section: charges at function entries, loop headers and bulk operations.
  const code = find(10);
  if (code) {
    const c = new WasmReader(wasm, code.bodyStart, name);
    const n = c.u32();
    if (n !== funcTypes.length) c.fail("function and code sections disagree");
    const w = new Writer().u32(n);
    for (let i = 0; i < n; i++) {
      const size = c.u32();
      const bodyStart = c.pos;
      const bodyEnd = bodyStart + size;
      const scan = scanBody(c, bodyEnd);
      c.pos = bodyEnd;
      const body = new Writer();
      // Locals: the original groups, plus one i32 scratch local when a bulk op needs it.
      const lr = new WasmReader(wasm, bodyStart, name);
      const groups = lr.u32();
      let localCount = 0;
      const groupBytes = wasm.subarray(lr.pos, scan.codeStart);
      for (let g = 0; g < groups; g++) {
        localCount += lr.u32();
        lr.byte();
      }
      const scratch = (typeParams[funcTypes[i]] ?? c.fail("bad function type")) + localCount;
      if (scan.bulk.length > 0) body.u32(groups + 1).bytes(groupBytes).bytes([0x01, 0x7f]);
      else body.u32(groups).bytes(groupBytes);
      charge(body, fuel, (x) => x.bytes([0x41]).s32(scan.total));
      // Splice charges into the instruction stream at the scanned offsets.
      const points = [
        ...scan.loops.map((l) => ({ at: l.at, loop: l.cost, bulk: false })),
        ...scan.bulk.map((at) => ({ at, loop: 0, bulk: true })),
      ].sort((a, b) => a.at - b.at);
      let from = scan.codeStart;
      for (const p of points) {
        body.bytes(wasm.subarray(from, p.at));
        if (p.bulk) {
          // The length is on top of the stack: keep it there and pay for it.
          body.bytes([0x22]).u32(scratch);
          charge(
            body,
            fuel,
            (x) => x.bytes([0x20]).u32(scratch).bytes([0x41]).s32(BULK_SHIFT).bytes([0x76]),
          );
        } else {
          charge(body, fuel, (x) => x.bytes([0x41]).s32(p.loop));
        }
        from = p.at;
      }
      body.bytes(wasm.subarray(from, bodyEnd));
      const bytes = body.done();
      w.u32(bytes.length).bytes(bytes);
    }
    rewritten.set(10, w.done());
  }

  // Reassemble, inserting the global and export sections where the order requires.
  const out = new Writer().bytes(wasm.subarray(0, 8));
  const emitted = new Set<number>();
  const emit = (id: number, body: Uint8Array) => {
    out.bytes([id]).u32(body.length).bytes(body);
    emitted.add(id);
  };
  const rank = (id: number) => SECTION_ORDER.indexOf(id);
  for (const s of all) {
    if (s.id !== 0) {
      for (const id of [6, 7]) {
        if (!emitted.has(id) && !find(id) && rank(id) < rank(s.id)) emit(id, rewritten.get(id)!);
      }
    }
    const replacement = rewritten.get(s.id);
    if (replacement && s.id !== 0) emit(s.id, replacement);
    else out.bytes(wasm.subarray(s.start, s.end));
  }
  for (const id of [6, 7]) if (!emitted.has(id)) emit(id, rewritten.get(id)!);
  return out.done();
}
