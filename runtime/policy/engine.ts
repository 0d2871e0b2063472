/**
 * The policy engine: asks every loaded module about a facts object and combines the
 * answers. Modules run in a worker with a memory cap, no WASI, no host functions beyond
 * Extism's own and no allowed hosts; a call that exceeds its time budget kills the worker.
 * Traps, timeouts, malformed output and unknown decisions are denies with POLICY_ERROR.
 *
 * @module
 */
import { OmotaiError } from "../errors.ts";
import type { Facts } from "./facts.ts";
import type { WorkerReply, WorkerRequest } from "./engine_worker.ts";
import {
  combine,
  type ModuleKind,
  type ModuleVerdict,
  parseModuleOutput,
  type Verdict,
} from "./verdict.ts";

/** Size of the shared buffer carrying facts in and verdicts out. */
const CHANNEL_BYTES = 1 << 20;
/** How long the caller spins before it sleeps on the answer. */
const SPIN_MS = 0.3;
/** Control state that tells the worker to exit. */
const STOP = 3;
/** Most facts in one worker round trip (keeps a batch far inside the time budget). */
const MAX_BATCH = 64;

interface Pending {
  facts: string;
  done: (outputs: (string | null)[] | undefined) => void;
}

/** A verified module ready to load. */
export interface ModuleSpec {
  name: string;
  kind: ModuleKind;
  wasm: Uint8Array;
  /** Hex SHA-256 of `wasm`, pinned in the Extism manifest. */
  sha256: string;
  /** JSON handed to the module as its `policy` config. */
  config: string;
}

/** Engine limits. */
export interface EngineOptions {
  /** Budget for one evaluation of all modules; default 250 ms. */
  timeoutMs?: number;
  /** WASM memory cap per module in 64 KiB pages; default 256 (16 MiB). */
  memoryMaxPages?: number;
}

/** An evaluation's outcome. */
export interface Evaluation {
  verdict: Verdict;
  verdicts: ModuleVerdict[];
}

/** Runs policy modules. Dispose to stop its worker. */
export class PolicyEngine implements AsyncDisposable {
  readonly modules: readonly Omit<ModuleSpec, "wasm">[];
  #specs: ModuleSpec[];
  readonly #baseConfigs: readonly string[];
  #timeoutMs: number;
  #memoryMaxPages: number;
  #worker: Worker | undefined;
  #ready: Promise<void> | undefined;
  #control = new Int32Array(new SharedArrayBuffer(16));
  #data = new Uint8Array(new SharedArrayBuffer(CHANNEL_BYTES));
  #queue: Promise<unknown> = Promise.resolve();
  #pending: Pending[] = [];
  #flushing = false;

  private constructor(specs: ModuleSpec[], options: EngineOptions) {
    this.#specs = specs;
    this.#baseConfigs = specs.map((s) => s.config);
    this.modules = specs.map(({ wasm: _wasm, ...rest }) => rest);
    this.#timeoutMs = options.timeoutMs ?? 250;
    this.#memoryMaxPages = options.memoryMaxPages ?? 256;
  }

  /** Starts an engine; rejects if a module cannot be instantiated. */
  static async create(specs: ModuleSpec[], options: EngineOptions = {}): Promise<PolicyEngine> {
    const engine = new PolicyEngine(specs, options);
    for (const s of specs) checkWasmSandbox(s.wasm, engine.#memoryMaxPages, s.name);
    await engine.#start();
    return engine;
  }

  /**
   * Adds origins to every module's `allowed_origins` config (the operator's dynamic domain
   * allows). The worker restarts with the new config before the next evaluation.
   */
  setExtraAllowedOrigins(origins: readonly string[]): Promise<void> {
    const run = this.#queue.then(() => {
      this.#specs = this.#specs.map((spec, i) => {
        const base = JSON.parse(this.#baseConfigs[i]) as Record<string, unknown>;
        const listed = Array.isArray(base.allowed_origins) ? base.allowed_origins : [];
        const allowed = [...new Set([...listed, ...origins])];
        return { ...spec, config: JSON.stringify({ ...base, allowed_origins: allowed }) };
      });
      this.#kill();
    });
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * Asks every module; never throws. Evaluations that arrive together (the requests of a
   * page load) go to the worker as one batch: one wake-up instead of one per request.
   */
  evaluate(facts: Facts): Promise<Evaluation> {
    return new Promise((resolve) => {
      this.#pending.push({
        facts: JSON.stringify(facts),
        done: (outputs) => resolve(this.#combine(outputs)),
      });
      this.#scheduleFlush();
    });
  }

  #scheduleFlush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    const run = this.#queue.then(async () => {
      // Let the rest of a burst that is being dispatched in this turn join the batch.
      await Promise.resolve();
      while (this.#pending.length > 0) {
        const batch = this.#takeBatch();
        let outputs: ((string | null)[] | undefined)[] | undefined;
        try {
          await this.#start();
          outputs = this.#ask(batch.map((b) => b.facts));
        } catch {
          outputs = undefined;
        }
        batch.forEach((b, i) => b.done(outputs?.[i]));
      }
    }).finally(() => {
      this.#flushing = false;
      if (this.#pending.length > 0) this.#scheduleFlush();
    });
    this.#queue = run.catch(() => {});
  }

  #takeBatch(): Pending[] {
    let bytes = 0;
    let n = 0;
    while (
      n < this.#pending.length && n < MAX_BATCH &&
      (n === 0 || bytes + this.#pending[n].facts.length < CHANNEL_BYTES / 4)
    ) {
      bytes += this.#pending[n].facts.length;
      n++;
    }
    return this.#pending.splice(0, n);
  }

  #combine(outputs: (string | null)[] | undefined): Evaluation {
    const verdicts = this.#specs.map((spec, i): ModuleVerdict => {
      const out = outputs === undefined
        ? { decision: "deny" as const, reason: "POLICY_ERROR", rule: "timeout or crash" }
        : parseModuleOutput(outputs[i]);
      return { module: spec.name, kind: spec.kind, ...out };
    });
    return { verdict: combine(verdicts), verdicts };
  }

  #start(): Promise<void> {
    if (this.#ready) return this.#ready;
    const worker = new Worker(new URL("./engine_worker.ts", import.meta.url), { type: "module" });
    this.#worker = worker;
    Atomics.store(this.#control, 0, 0);
    this.#ready = new Promise<void>((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<WorkerReply>) => {
        if (e.data.error) reject(new Error(`policy module failed to load: ${e.data.error}`));
        else resolve();
      };
      worker.onerror = (e) => {
        e.preventDefault();
        this.#kill();
        reject(new Error("policy worker crashed"));
      };
    });
    const init: WorkerRequest = {
      type: "init",
      modules: this.#specs.map((s) => ({
        name: s.name,
        wasm: s.wasm,
        sha256: s.sha256,
        config: s.config,
      })),
      control: this.#control.buffer as SharedArrayBuffer,
      data: this.#data.buffer as SharedArrayBuffer,
    };
    worker.postMessage(init);
    this.#ready.catch(() => this.#kill());
    return this.#ready;
  }

  /**
   * One batch over shared memory: facts separated by newlines (JSON never contains a raw
   * one), answered with one array of module outputs per facts. The caller's thread waits,
   * bounded by the time budget: a module that hangs is killed with its worker.
   */
  #ask(facts: string[]): ((string | null)[] | undefined)[] | undefined {
    if (this.#specs.length === 0) return facts.map(() => []);
    const bytes = new TextEncoder().encode(facts.join("\n"));
    if (bytes.length > this.#data.length) return undefined;
    this.#data.set(bytes);
    this.#control[1] = bytes.length;
    Atomics.store(this.#control, 0, 1);
    Atomics.notify(this.#control, 0);
    const deadline = performance.now() + this.#timeoutMs;
    // Most answers arrive within tens of microseconds: spin briefly before sleeping.
    const spinUntil = performance.now() + SPIN_MS;
    while (Atomics.load(this.#control, 0) === 1 && performance.now() < spinUntil) {
      // busy wait
    }
    while (Atomics.load(this.#control, 0) === 1) {
      const left = deadline - performance.now();
      if (left <= 0 || Atomics.wait(this.#control, 0, 1, left) === "timed-out") {
        this.#kill();
        return undefined;
      }
    }
    const out = new TextDecoder().decode(this.#data.slice(0, this.#control[2]));
    Atomics.store(this.#control, 0, 0);
    try {
      const parsed = JSON.parse(out);
      if (!Array.isArray(parsed) || parsed.length !== facts.length) return undefined;
      return parsed.map((p) => Array.isArray(p) ? p : undefined);
    } catch {
      return undefined;
    }
  }

  #kill(): void {
    // A worker asleep in Atomics.wait ignores terminate() and keeps the process alive:
    // wake it with the stop state first (a hung module is ended by terminate() itself).
    Atomics.store(this.#control, 0, STOP);
    Atomics.notify(this.#control, 0);
    this.#worker?.terminate();
    this.#worker = undefined;
    this.#ready = undefined;
    // A fresh channel: a killed worker can never answer into the next one's buffers.
    this.#control = new Int32Array(new SharedArrayBuffer(16));
    this.#data = new Uint8Array(new SharedArrayBuffer(CHANNEL_BYTES));
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.#kill();
    return Promise.resolve();
  }
}

/** The only import namespace a module may use: Extism's own host functions. */
export const ALLOWED_IMPORT_MODULE = "extism:host/env";

/**
 * Refuses a module that imports anything but Extism's host functions, imports its memory,
 * or declares no memory maximum or one above `maxPages` (the engine enforces the declared
 * maximum, so this is the memory cap).
 */
export function checkWasmSandbox(wasm: Uint8Array, maxPages: number, name: string): void {
  const fail = (why: string): never => {
    throw new OmotaiError("POLICY_MODULE_REJECTED", `${name}: ${why}`);
  };
  if (
    wasm.length < 8 || wasm[0] !== 0 || wasm[1] !== 0x61 || wasm[2] !== 0x73 || wasm[3] !== 0x6d
  ) {
    fail("not a WebAssembly module");
  }
  let pos = 8;
  const u32 = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= wasm.length) fail("truncated module");
      const b = wasm[pos++];
      result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result >>> 0;
      shift += 7;
      if (shift > 35) fail("bad LEB128");
    }
  };
  const name_ = (): string => {
    const len = u32();
    const s = new TextDecoder().decode(wasm.subarray(pos, pos + len));
    pos += len;
    return s;
  };
  let memoryMax: number | undefined;
  let memories = 0;
  while (pos < wasm.length) {
    const id = wasm[pos++];
    const size = u32();
    const end = pos + size;
    if (id === 2) {
      const count = u32();
      for (let i = 0; i < count; i++) {
        const mod = name_();
        name_();
        const kind = wasm[pos++];
        if (mod !== ALLOWED_IMPORT_MODULE) {
          fail(`imports from "${mod}", only ${ALLOWED_IMPORT_MODULE} is allowed`);
        }
        if (kind === 0) u32();
        else fail("imports a table, memory or global");
      }
    } else if (id === 5) {
      const count = u32();
      memories += count;
      for (let i = 0; i < count; i++) {
        const flags = u32();
        u32();
        if (flags & 1) memoryMax = u32();
        else fail("declares no memory maximum");
      }
    }
    pos = end;
  }
  if (memories > 1) fail("declares more than one memory");
  if (memoryMax !== undefined && memoryMax > maxPages) {
    fail(`may grow to ${memoryMax} pages; the cap is ${maxPages}`);
  }
}
