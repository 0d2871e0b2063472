/**
 * The door of runtime/login/ (runtime-performed login: credential fields, TOTP, push challenges):
 * other folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { readFormSubmission } from "./form_submission.ts";
export { performLogin } from "./login_flow.ts";
export type {
  LoginPlan,
  LoginSecrets,
  LoginStatus,
  PushChannel,
  RuntimeWrite,
  RuntimeWriteHold,
} from "./login_flow.ts";
export { parseTotpSeed } from "./totp.ts";
