/**
 * One policy's world: its verified modules in an engine, a boundary over the shared domain
 * rules and audit, the gate with the operator's approver, the egress hooks and the tool
 * settings. The runtime's own policy has one; an agent added with `--policy FILE` gets its
 * own, built the first time it connects and kept for the runtime's life.
 *
 * @module
 */
import type { AuditWriter, DomainSnapshot } from "../store/mod.ts";
import type { BrowserHooksFactory } from "../browser/mod.ts";
import { egressHooks, type EgressProxy } from "../egress/mod.ts";
import { OmotaiError } from "../mod.ts";
import { type Approver, Boundary, type Gate, PolicyGate } from "../gate/mod.ts";
import {
  loadModules,
  loadPolicyFile,
  parsePolicy,
  PolicyEngine,
  type PolicyFile,
} from "../policy/mod.ts";
import { type ToolSettings, toolSettingsFrom } from "../tools/mod.ts";
import { carriesEgressSecret, processRedactor } from "../redact/mod.ts";

/** Everything a session of one policy runs under. */
export interface PolicyWorld {
  policy: PolicyFile;
  engine: PolicyEngine;
  boundary: Boundary;
  gate: Gate;
  hooks: BrowserHooksFactory;
  settings: ToolSettings;
  /**
   * Under `read_only`, the origins a runtime login may submit to when the policy names them
   * (`login_submit_origins`); undefined: the origins the credentials are bound to.
   */
  loginOrigins: readonly string[] | undefined;
}

/**
 * The origins a login may submit to under `read_only`, when the policy names them. Unnamed,
 * a login submits only to the page origin its credentials are bound to (the grant's or the
 * startup login's), which the login already requires of the form's action.
 */
export function loginSubmitOrigins(policy: PolicyFile): readonly string[] | undefined {
  return policy.read_only ? policy.login_submit_origins : undefined;
}

/** What every world shares. */
export interface PolicyWorldDeps {
  domains: { current(): DomainSnapshot };
  audit: AuditWriter;
  proxy: EgressProxy;
  approver: Approver;
}

/** Builds and caches worlds by policy file. */
export class PolicyWorlds implements AsyncDisposable {
  readonly #deps: PolicyWorldDeps;
  readonly #worlds = new Map<string, Promise<PolicyWorld>>();
  #reserved: string[] = [];

  constructor(deps: PolicyWorldDeps) {
    this.#deps = deps;
  }

  /** The world of `policyFile` (the empty default policy without one). */
  get(policyFile?: string): Promise<PolicyWorld> {
    const key = policyFile ?? "";
    let world = this.#worlds.get(key);
    if (!world) {
      world = this.#build(policyFile);
      // A policy that failed to load is tried again next time (the file may be fixed).
      world.catch(() => this.#worlds.delete(key));
      this.#worlds.set(key, world);
    }
    return world;
  }

  /** Reserves the runtime's own origins in every world, present and future. */
  async reserve(origins: readonly string[]): Promise<void> {
    this.#reserved = [...this.#reserved, ...origins];
    for (const w of this.#worlds.values()) {
      (await w.catch(() => undefined))?.boundary.reserve(origins);
    }
  }

  /** The module names of every loaded world (for the console's policies view). */
  async loaded(): Promise<PolicyWorld[]> {
    const all = await Promise.all([...this.#worlds.values()].map((w) => w.catch(() => undefined)));
    return all.filter((w): w is PolicyWorld => w !== undefined);
  }

  async #build(policyFile?: string): Promise<PolicyWorld> {
    // The launcher grants the policies it knows of at start; an agent added with its own
    // policy since then needs a restart, which a bare permission error would not say.
    if (
      policyFile &&
      Deno.permissions.querySync({ name: "read", path: policyFile }).state !== "granted"
    ) {
      throw new OmotaiError(
        "POLICY_NOT_GRANTED",
        `this runtime may not read ${policyFile}: the launcher grants the policies known at start, so an agent added with its own policy since then needs a restart`,
      );
    }
    const policy = policyFile ? await loadPolicyFile(policyFile) : parsePolicy("");
    // Every module is verified before anything runs under this policy.
    const specs = await loadModules(policy, policyFile);
    const engine = await PolicyEngine.create(specs).catch((err) => {
      throw new OmotaiError("POLICY_ENGINE_FAILED", (err as Error).message);
    });
    const { domains, audit, proxy, approver } = this.#deps;
    const boundary = new Boundary({
      engine,
      domains,
      audit,
      allowedOrigins: policy.allowed_origins,
      secretIn: carriesEgressSecret,
      websockets: { readOnly: policy.read_only, allowed: policy.websockets },
    });
    boundary.reserve(this.#reserved);
    const gate = new PolicyGate(boundary, {
      approver,
      confirmTimeoutMs: policy.confirm_timeout_seconds * 1000,
      maxConfirmations: policy.max_confirmations,
      scriptWrites: policy.script_writes === "confirm",
      redact: (text) => processRedactor().redact(text),
    });
    return {
      policy,
      engine,
      boundary,
      gate,
      hooks: egressHooks({
        boundary,
        proxy,
        pause: policy.request_guard,
      }),
      settings: toolSettingsFrom(policy),
      loginOrigins: loginSubmitOrigins(policy),
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const w of await this.loaded()) await w.engine[Symbol.asyncDispose]();
  }
}
