/**
 * The runtime process's last resort: a fault that escaped containment at its source (every
 * per-session component guards its own callbacks) is logged with its name and place, never
 * its message (it may quote a page), and does not end the process and every other session
 * with it. The runtime ends on a signal or its client leaving, nothing else.
 *
 * Installed by the runtime's entry point only: a test process keeps Deno's own handling, so
 * a fault a test causes still fails it.
 *
 * @module
 */
import { describeError } from "../../cdp/mod.ts";
import { log } from "../mod.ts";

/** Keeps the process alive past an uncaught error or unhandled rejection, logging each. */
export function installLastResort(): void {
  globalThis.addEventListener("unhandledrejection", (e) => {
    e.preventDefault();
    log(`UNHANDLED_REJECTION: ${describeError(e.reason)}`);
  });
  globalThis.addEventListener("error", (e) => {
    e.preventDefault();
    log(`UNCAUGHT_ERROR: ${describeError(e.error)}`);
  });
}
