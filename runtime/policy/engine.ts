/**
 * The policy engine: asks every loaded module about a facts object and combines the
 * answers. Modules run on the caller's thread in a lean host for Extism's kernel ABI: no
 * WASI, no host functions beyond the kernel's own, no network, a memory cap, and a fuel
 * budget per call (metered instructions) instead of a wall-clock timeout, so a verdict never
 * waits on another thread and the same facts always give the same verdict. Traps, exhausted
 * fuel, malformed output and unknown decisions are denies with POLICY_ERROR.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";
import { baseFacts, FRESH_SESSION } from "./fact_builders.ts";
import type { Facts } from "./facts.ts";
import { type CallFailure, type CallResult, KernelModule } from "./kernel_host.ts";
import { sha256Hex } from "./signing.ts";
import { checkWasmSandbox } from "./wasm_sandbox.ts";
import {
  combine,
  type ModuleKind,
  type ModuleOutput,
  type ModuleVerdict,
  parseModuleOutput,
} from "./verdict.ts";
import type { Decision } from "./decision.ts";

/** A verified module ready to load. */
export interface ModuleSpec {
  name: string;
  kind: ModuleKind;
  wasm: Uint8Array;
  /** Hex SHA-256 of `wasm`, the bytes whose signature was verified; checked again here. */
  sha256: string;
  /** JSON handed to the module as its `policy` config. */
  config: string;
  /** Key id of the trusted key whose signature was verified (the console shows it). */
  signer?: string;
}

/** Engine limits. */
export interface EngineOptions {
  /**
   * Fuel for one call of one module, in metered instructions; default 20,000,000 (tens of
   * milliseconds at most; the shipped modules use under one million).
   */
  fuel?: number;
  /** WASM memory cap per module in 64 KiB pages; default 256 (16 MiB). */
  memoryMaxPages?: number;
  /** Cap of the host memory a call may allocate (input, config, output); default 4 MiB. */
  hostBytes?: number;
}

/** An evaluation's outcome. */
export interface Evaluation {
  verdict: Decision;
  verdicts: ModuleVerdict[];
}

const DEFAULT_FUEL = 20_000_000;
const encoder = new TextEncoder();
/**
 * Calls per module at load: V8 first runs WASM from its baseline compiler and optimizes hot
 * functions later, so without this the first real verdicts pay several times over.
 */
const WARM_UP_CALLS = 600;
/** Module outputs repeat (a handful of verdicts): parsed once, kept up to this many. */
const OUTPUT_CACHE_MAX = 512;

/** Runs policy modules. */
export class PolicyEngine implements AsyncDisposable {
  readonly modules: readonly Omit<ModuleSpec, "wasm">[];
  #specs: ModuleSpec[];
  #loaded: KernelModule[];
  readonly #baseConfigs: readonly string[];
  readonly #limits: { fuel: number; hostBytes: number };

  private constructor(
    specs: ModuleSpec[],
    loaded: KernelModule[],
    limits: { fuel: number; hostBytes: number },
  ) {
    this.#specs = specs;
    this.#loaded = loaded;
    this.#baseConfigs = specs.map((s) => s.config);
    this.#limits = limits;
    this.modules = specs.map(({ wasm: _wasm, ...rest }) => rest);
  }

  /** Loads the modules; rejects one that fails the sandbox check, its hash, or to load. */
  static async create(specs: ModuleSpec[], options: EngineOptions = {}): Promise<PolicyEngine> {
    const limits = {
      fuel: options.fuel ?? DEFAULT_FUEL,
      hostBytes: options.hostBytes ?? 4 << 20,
    };
    const memoryMaxPages = options.memoryMaxPages ?? 256;
    const loaded: KernelModule[] = [];
    for (const s of specs) {
      checkWasmSandbox(s.wasm, memoryMaxPages, s.name);
      // The pin: only the exact bytes whose signature was verified are compiled.
      if ((await sha256Hex(s.wasm)) !== s.sha256) {
        throw new OmotaiError(
          "POLICY_MODULE_REJECTED",
          `policy module failed to load: ${s.name}: bytes do not match the pinned SHA-256`,
        );
      }
      try {
        loaded.push(await KernelModule.load(s.wasm, { policy: s.config }, limits, s.name));
      } catch (err) {
        throw new OmotaiError(
          "POLICY_MODULE_REJECTED",
          `policy module failed to load: ${(err as Error).message}`,
        );
      }
    }
    warmUp(loaded);
    return new PolicyEngine(specs, loaded, limits);
  }

  /**
   * Adds origins to every module's `allowed_origins` config (the operator's dynamic domain
   * allows). Modules are instantiated afresh: a module may cache its config, which Extism
   * fixes for an instance's whole life.
   */
  setExtraAllowedOrigins(origins: readonly string[]): Promise<void> {
    this.#specs = this.#specs.map((spec, i) => {
      const base = JSON.parse(this.#baseConfigs[i]) as Record<string, unknown>;
      const listed = Array.isArray(base.allowed_origins) ? base.allowed_origins : [];
      const allowed = [...new Set([...listed, ...origins])];
      return { ...spec, config: JSON.stringify({ ...base, allowed_origins: allowed }) };
    });
    this.#loaded = this.#loaded.map((m, i) =>
      KernelModule.fromCompiled(
        m.compiled,
        { policy: this.#specs[i].config },
        this.#limits,
        this.#specs[i].name,
      )
    );
    // No new warm-up: optimized code belongs to the compiled module, which is reused.
    return Promise.resolve();
  }

  /** Asks every module; never throws. */
  evaluate(facts: Facts): Promise<Evaluation> {
    return Promise.resolve(this.evaluateNow(facts));
  }

  /** {@link evaluate}, synchronously. */
  evaluateNow(facts: Facts): Evaluation {
    const input = encoder.encode(JSON.stringify(facts));
    const verdicts = this.#loaded.map((m, i): ModuleVerdict => {
      const spec = this.#specs[i];
      return { module: spec.name, kind: spec.kind, ...outcome(m.call(input)) };
    });
    return { verdict: combine(verdicts), verdicts };
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.#loaded = [];
    return Promise.resolve();
  }
}

const outputCache = new Map<string, ModuleOutput>();

function outcome(result: CallResult): ModuleOutput {
  if (result.ok) {
    let parsed = outputCache.get(result.output);
    if (parsed === undefined) {
      parsed = parseModuleOutput(result.output);
      if (outputCache.size >= OUTPUT_CACHE_MAX) outputCache.clear();
      outputCache.set(result.output, parsed);
    }
    return { ...parsed };
  }
  return { decision: "deny", reason: "POLICY_ERROR", rule: FAILURE_RULE[result.failure] };
}

/** The `rule` of the deny a failed module call becomes, per way it failed. */
const FAILURE_RULE: Readonly<Record<CallFailure, string>> = {
  fuel: "fuel exhausted",
  trap: "trap",
  error: "module reported an error",
  "no output": "no output",
};

/** Runs each module over a few typical facts until V8 has optimized its hot code. */
function warmUp(modules: readonly KernelModule[]): void {
  const inputs = warmUpFacts().map((f) => encoder.encode(JSON.stringify(f)));
  for (const m of modules) {
    for (let i = 0; i < WARM_UP_CALLS; i++) m.call(inputs[i % inputs.length]);
  }
}

function warmUpFacts(): Facts[] {
  const origin = "http://warm-up.invalid";
  const base: Facts = {
    ...baseFacts("request", { ...FRESH_SESSION, actionsUsed: 1, secondsElapsed: 1 }),
    target: { scheme: "http", origin, path: "/a/b" },
    resource_type: "image",
    frame: { top: true, origin },
  };
  return [
    base,
    { ...base, kind: "navigate", resource_type: "document", initiator: "agent" },
    {
      ...base,
      kind: "click",
      resource_type: "action",
      initiator: "agent",
      method: "POST",
      form: {
        method: "POST",
        action_origin: origin,
        action_path: "/submit",
        submits: true,
        fields: [{ name: "q", type: "text" }],
      },
      element: {
        tag: "a",
        type: null,
        role: "link",
        link_scheme: "http",
        link_origin: origin,
        link_path: "/next",
      },
    },
  ];
}
