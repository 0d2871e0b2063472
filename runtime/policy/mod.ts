/**
 * The door of runtime/policy/ (facts, decisions, policy file, signed WASM engine): other folders
 * import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export type {
  CaptureTemplates,
  GithubAppTemplate,
  LinearOauthAppTemplate,
} from "./capture_templates.ts";
export { formatResults, runCases } from "./case_runner.ts";
export { deny } from "./decision.ts";
export type { Decision, RuntimeDenyReason } from "./decision.ts";
export { PolicyEngine } from "./engine.ts";
export { baseFacts, targetOf } from "./fact_builders.ts";
export type { SessionCounters } from "./fact_builders.ts";
export { FACTS_ABI_VERSION } from "./facts.ts";
export type { ActionKind, Facts } from "./facts.ts";
export { loadModules, PROJECT_PUBLIC_KEY } from "./loader.ts";
export { loadPolicyFile, parsePolicy } from "./policy_file.ts";
export type { PolicyFile } from "./policy_file.ts";
export { generateKeyPair, ManifestSchema, signModule, verifyModule } from "./signing.ts";
