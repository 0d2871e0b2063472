/**
 * A lean host for Extism's kernel ABI (`extism:host/env`): what a plugin built with an
 * Extism PDK imports to read its input and config and to set its output. Calls are
 * synchronous on the caller's thread, the module is fuel-metered (see wasm_meter.ts), the
 * host's own memory is capped and reset at every call, and there are no HTTP, variable or
 * logging capabilities. Tests check it against the Extism JS SDK on every shipped case.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";
import { FUEL_EXPORT, meterWasm } from "./wasm_meter.ts";

/** Kernel functions a module may import; anything else fails to link. */
const KERNEL_FUNCTIONS = [
  "alloc",
  "free",
  "length",
  "length_unsafe",
  "load_u8",
  "load_u64",
  "store_u8",
  "store_u64",
  "input_offset",
  "input_length",
  "input_load_u8",
  "input_load_u64",
  "output_set",
  "error_set",
  "config_get",
  "log_trace",
  "log_debug",
  "log_info",
  "log_warn",
  "log_error",
] as const;

/** Kernel functions this host withholds on purpose, and why (in the load error). */
const WITHHELD: Record<string, string> = {
  var_get: "variables would make a verdict depend on earlier calls",
  var_set: "variables would make a verdict depend on earlier calls",
  http_request: "policy modules have no network",
  http_status_code: "policy modules have no network",
  http_headers: "policy modules have no network",
};

/** Why a call produced no output. */
export type CallFailure = "trap" | "fuel" | "error" | "no output";

/** One call's result: the output text, or why there is none. */
export type CallResult = { ok: true; output: string } | { ok: false; failure: CallFailure };

/** Limits of a kernel module. */
export interface KernelLimits {
  /** Fuel (metered instructions) for one call. */
  fuel: number;
  /** Cap of the host-side memory (input copies, config values, output) in bytes. */
  hostBytes: number;
}

/** Host memory exhausted: the call fails like a trap. */
class HostMemoryExceeded extends Error {}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * One instantiated module. `call()` never throws: a trap, exhausted fuel or a missing
 * output comes back as a failure, and the instance is replaced so that state a trap left
 * half-written never reaches the next call.
 */
export class KernelModule {
  readonly #module: WebAssembly.Module;
  readonly #config: Map<string, Uint8Array>;
  readonly #limits: KernelLimits;
  #heap = new Uint8Array(1 << 16);
  #view = new DataView(this.#heap.buffer);
  /** Next free host address; 0 means "none" in the ABI, so blocks start at 8. */
  #next = 8;
  #blocks = new Map<number, number>();
  #input: Uint8Array = new Uint8Array(0);
  #inputView: DataView = new DataView(this.#input.buffer);
  #output: { at: number; length: number } | undefined;
  #errorSet = false;
  #fuelGlobal!: WebAssembly.Global;
  #verdict!: () => unknown;

  private constructor(
    module: WebAssembly.Module,
    config: Record<string, string>,
    limits: KernelLimits,
  ) {
    this.#module = module;
    this.#config = new Map(Object.entries(config).map(([k, v]) => [k, encoder.encode(v)]));
    this.#limits = limits;
  }

  /** Meters, compiles and instantiates `wasm`; rejects a module it cannot run. */
  static async load(
    wasm: Uint8Array,
    config: Record<string, string>,
    limits: KernelLimits,
    name = "module",
  ): Promise<KernelModule> {
    const metered = meterWasm(wasm, limits.fuel, name);
    let module: WebAssembly.Module;
    try {
      module = await WebAssembly.compile(metered as Uint8Array<ArrayBuffer>);
    } catch (err) {
      throw new OmotaiError("POLICY_MODULE_REJECTED", `${name}: ${(err as Error).message}`);
    }
    for (const i of WebAssembly.Module.imports(module)) {
      if (i.module === "extism:host/env" && i.name in WITHHELD) {
        throw new OmotaiError(
          "POLICY_MODULE_REJECTED",
          `${name}: imports ${i.name}, which policy modules do not get: ${WITHHELD[i.name]}`,
        );
      }
    }
    return KernelModule.fromCompiled(module, config, limits, name);
  }

  /** Instantiates an already metered and compiled module with another config. */
  static fromCompiled(
    module: WebAssembly.Module,
    config: Record<string, string>,
    limits: KernelLimits,
    name = "module",
  ): KernelModule {
    const m = new KernelModule(module, config, limits);
    try {
      m.#instantiate();
    } catch (err) {
      throw new OmotaiError("POLICY_MODULE_REJECTED", `${name}: ${(err as Error).message}`);
    }
    return m;
  }

  /** The compiled, metered module (to instantiate again with another config). */
  get compiled(): WebAssembly.Module {
    return this.#module;
  }

  #instantiate(): void {
    const instance = new WebAssembly.Instance(this.#module, {
      "extism:host/env": this.#kernel(),
    });
    const fuel = instance.exports[FUEL_EXPORT];
    const verdict = instance.exports.verdict;
    if (!(fuel instanceof WebAssembly.Global)) {
      throw new OmotaiError("POLICY_MODULE_REJECTED", "module is not metered");
    }
    if (typeof verdict !== "function") {
      throw new OmotaiError("POLICY_MODULE_REJECTED", "module exports no verdict function");
    }
    this.#fuelGlobal = fuel;
    this.#verdict = verdict as () => unknown;
  }

  /** Runs `verdict` with `input`; never throws. */
  call(input: Uint8Array): CallResult {
    this.#next = 8;
    this.#blocks.clear();
    this.#output = undefined;
    this.#errorSet = false;
    this.#input = input;
    this.#inputView = new DataView(input.buffer, input.byteOffset, input.byteLength);
    this.#fuelGlobal.value = this.#limits.fuel;
    let rc: unknown;
    try {
      rc = this.#verdict();
    } catch {
      const failure: CallFailure = (this.#fuelGlobal.value as number) < 0 ? "fuel" : "trap";
      this.#recover();
      return { ok: false, failure };
    } finally {
      this.#input = new Uint8Array(0);
    }
    if (this.#errorSet || (rc !== undefined && rc !== 0)) return { ok: false, failure: "error" };
    // Set by output_set during the call (the compiler cannot see through the closure).
    const out = this.#output as { at: number; length: number } | undefined;
    if (out === undefined) return { ok: false, failure: "no output" };
    return { ok: true, output: decoder.decode(this.#heap.subarray(out.at, out.at + out.length)) };
  }

  /** Fuel the last call used (for benchmarks and docs). */
  get fuelUsed(): number {
    return this.#limits.fuel - (this.#fuelGlobal.value as number);
  }

  #recover(): void {
    try {
      this.#instantiate();
    } catch {
      // Keep the old instance: the next call will fail again and be denied.
    }
  }

  #alloc(n: number): number {
    if (!Number.isSafeInteger(n) || n < 0) throw new HostMemoryExceeded();
    const at = this.#next;
    const end = at + n;
    if (end > this.#limits.hostBytes) throw new HostMemoryExceeded();
    if (end > this.#heap.length) {
      let size = this.#heap.length * 2;
      while (size < end) size *= 2;
      const heap = new Uint8Array(Math.min(size, this.#limits.hostBytes));
      heap.set(this.#heap);
      this.#heap = heap;
      this.#view = new DataView(heap.buffer);
    }
    this.#next = (end + 7) & ~7;
    this.#blocks.set(at, n);
    // Fresh blocks are zero, as in Extism: nothing of an earlier call (its config copies,
    // its output) can be read back, so a verdict depends on this call's facts only.
    this.#heap.fill(0, at, end);
    return at;
  }

  /** A host address the module may touch: inside what has been allocated in this call. */
  #addr(a: bigint, width: number): number {
    const at = Number(a);
    if (at < 8 || at + width > this.#next) throw new RangeError("host address out of bounds");
    return at;
  }

  #kernel(): Record<(typeof KERNEL_FUNCTIONS)[number], (...args: never[]) => unknown> {
    return {
      alloc: (n: bigint) => BigInt(this.#alloc(Number(n))),
      free: (_a: bigint) => {},
      length: (a: bigint) => BigInt(this.#blocks.get(Number(a)) ?? 0),
      length_unsafe: (a: bigint) => BigInt(this.#blocks.get(Number(a)) ?? 0),
      load_u8: (a: bigint) => this.#heap[this.#addr(a, 1)],
      load_u64: (a: bigint) => this.#view.getBigUint64(this.#addr(a, 8), true),
      store_u8: (a: bigint, v: number) => {
        this.#heap[this.#addr(a, 1)] = v;
      },
      store_u64: (a: bigint, v: bigint) => {
        this.#view.setBigUint64(this.#addr(a, 8), v, true);
      },
      // The input lives outside the host heap: an offset of 0 tells the PDK to read it
      // with input_load_*.
      input_offset: () => 0n,
      input_length: () => BigInt(this.#input.length),
      input_load_u8: (a: bigint) => {
        const at = Number(a);
        if (at < 0 || at >= this.#input.length) throw new RangeError("input out of bounds");
        return this.#input[at];
      },
      input_load_u64: (a: bigint) => {
        const at = Number(a);
        if (at < 0 || at + 8 > this.#input.length) throw new RangeError("input out of bounds");
        return this.#inputView.getBigUint64(at, true);
      },
      output_set: (a: bigint, n: bigint) => {
        const at = Number(a);
        const length = Number(n);
        const block = this.#blocks.get(at);
        if (block === undefined || length > block) throw new RangeError("output outside a block");
        this.#output = { at, length };
      },
      error_set: (_a: bigint) => {
        this.#errorSet = true;
      },
      // Logs are dropped: a module's words never reach the runtime's log.
      log_trace: (_a: bigint) => {},
      log_debug: (_a: bigint) => {},
      log_info: (_a: bigint) => {},
      log_warn: (_a: bigint) => {},
      log_error: (_a: bigint) => {},
      config_get: (a: bigint) => {
        const at = Number(a);
        const length = this.#blocks.get(at);
        if (length === undefined) return 0n;
        const value = this.#config.get(decoder.decode(this.#heap.subarray(at, at + length)));
        if (value === undefined) return 0n;
        const to = this.#alloc(value.length);
        this.#heap.set(value, to);
        return BigInt(to);
      },
    };
  }
}
