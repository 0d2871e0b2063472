/**
 * The door of shared/ (CodedError, the base of every coded error; the byte-rate meter of cdp/ and
 * proxy/): other folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { ByteRate } from "./byte_rate.ts";
export type { ByteRateLimits, Pace } from "./byte_rate.ts";
export { CodedError } from "./coded_error.ts";
