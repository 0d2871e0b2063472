/**
 * The door of runtime/launcher/ (the omotai command: reads its command line, runs the runtime with
 * its permissions): other folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { BrowserPin, SHA256_HEX } from "./browser_pin.ts";
export type { PinSource } from "./browser_pin.ts";
export { dataDirFrom } from "./data_dir.ts";
export { databaseUrl } from "./database_url.ts";
export { childArgv, launch, localFacts } from "./launcher.ts";
export {
  AGENT_OPTIONS,
  AUDIT_LIST_OPTIONS,
  AUDIT_OPTIONS,
  DOMAIN_OPTIONS,
  EVAL_OPTIONS,
  GRANT_OPTIONS,
  POLICY_KEYGEN_OPTIONS,
  POLICY_SIGN_OPTIONS,
  POLICY_VERIFY_OPTIONS,
  SECRET_OPTIONS,
  spreadLists,
  START_OPTIONS,
  TENANT_OPTIONS,
  VAULT_OPTIONS,
} from "./options.ts";
export { childPermissions } from "./permissions.ts";
export { listenForStop, STOP_GRACE_MS, StopRule } from "./stop_signals.ts";
export type { StopSignal, StopVerdict } from "./stop_signals.ts";
