/**
 * The door of runtime/ (errors, log, version (main.ts is the entry)): other folders import from
 * this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { readAtMost } from "./bounded_read.ts";
export {
  BrowserLostError,
  ElementActionError,
  errorCode,
  InvalidArgumentsError,
  OmotaiError,
  PolicyFileError,
  StaleRefError,
  UnknownRefError,
} from "./errors.ts";
export { addLogFilter, log } from "./log.ts";
export { VERSION } from "./version.ts";
