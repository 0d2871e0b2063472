/**
 * Loads the policy modules a policy file names, verifying each signature against the
 * trusted keys before anything is instantiated. Startup fails on any refusal.
 *
 * @module
 */
import { dirname, isAbsolute, join } from "node:path";
import { OmotaiError } from "../mod.ts";
import type { ModuleSpec } from "./engine.ts";
import type { PolicyFile } from "./policy_file.ts";
import { PolicySignatureError, verifyModule } from "./signing.ts";

/** The project's public key; the bundled modules are signed with it. */
export const PROJECT_PUBLIC_KEY = "3bkIQOwP+DLfngR+fC1n+of44pWCjjcSNdXia9ll6K4=";

const BUNDLED_DIR = new URL("../../policies-wasm/dist", import.meta.url).pathname;

/** The keys of the policy file handed to every module as config. */
export function moduleConfig(policy: PolicyFile): Record<string, unknown> {
  return {
    allowed_origins: policy.allowed_origins,
    denied_paths: policy.denied_paths,
    read_only: policy.read_only,
    confirm_writes: policy.confirm_writes,
    max_actions: policy.max_actions,
    max_seconds: policy.max_seconds,
  };
}

/** Reads and verifies every module; `policyPath` anchors relative module paths. */
export async function loadModules(
  policy: PolicyFile,
  policyPath: string | undefined,
): Promise<ModuleSpec[]> {
  const trusted = policy.trusted_keys ?? [PROJECT_PUBLIC_KEY];
  const entries = policy.modules ?? [{ path: "bundled:baseline" }];
  const base = policyPath ? dirname(policyPath) : Deno.cwd();
  const specs: ModuleSpec[] = [];
  for (const entry of entries) {
    const file = entry.path.startsWith("bundled:")
      ? join(BUNDLED_DIR, `${entry.path.slice("bundled:".length)}.wasm`)
      : isAbsolute(entry.path)
      ? entry.path
      : join(base, entry.path);
    let wasm: Uint8Array;
    try {
      wasm = await Deno.readFile(file);
    } catch (err) {
      throw new OmotaiError(
        "POLICY_MODULE_REJECTED",
        `cannot read policy module ${entry.path}: ${(err as Error).message}`,
      );
    }
    let signature: unknown;
    try {
      signature = JSON.parse(await Deno.readTextFile(`${file}.sig.json`));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) {
        throw new OmotaiError("POLICY_MODULE_REJECTED", `${entry.path}: unreadable signature file`);
      }
      signature = undefined;
    }
    try {
      const { manifest, sha256, keyId } = await verifyModule(wasm, signature, trusted, entry.path);
      specs.push({
        name: manifest.name,
        kind: manifest.kind,
        wasm,
        sha256,
        signer: keyId,
        config: JSON.stringify({ ...moduleConfig(policy), ...(entry.config ?? {}) }),
      });
    } catch (err) {
      if (err instanceof PolicySignatureError) {
        throw new OmotaiError("POLICY_MODULE_REJECTED", `${err.code}: ${err.message}`);
      }
      throw err;
    }
  }
  return specs;
}
