/**
 * The door of runtime/proxy/ (the egress proxy child (--allow-net only)): other folders import from
 * this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { HELD_BODY_RATE } from "./proxy_protocol.ts";
export type { FromProxy, ProxyAnswer, ProxyQuestion } from "./proxy_protocol.ts";
export type { ToProxyMessage } from "./socket_listen.ts";
