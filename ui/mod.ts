/**
 * The door of ui/ (operator console): other folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { createConsoleApp, isConsolePath } from "./console_app.ts";
export { escapeHtml } from "./html.ts";
export type {
  ApprovalsPort,
  AuditPort,
  Capacity,
  QuestionsPort,
  SessionInfo,
  SessionsPort,
} from "./ports.ts";
