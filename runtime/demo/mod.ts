/**
 * The door of runtime/demo/ (the demo shop of `task start`): other folders import from this file
 * only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { createDemoSite } from "./site.ts";
