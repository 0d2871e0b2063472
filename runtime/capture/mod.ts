/**
 * The door of runtime/capture/ (generated-credential capture: reviewed vendor workflows writing
 * into the vault): other folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { CAPTURE_WORKFLOWS, performCapture } from "./capture_flow.ts";
export type {
  CaptureAuditRow,
  CaptureOutcome,
  CaptureRequest,
  WorkflowName,
} from "./capture_flow.ts";
