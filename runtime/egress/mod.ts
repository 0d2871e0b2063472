/**
 * The door of runtime/egress/ (request guard, proxy judge, proxy parent, egress hooks): other
 * folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { egressHooks } from "./egress_hooks.ts";
export { EgressProxy, MAX_SOCKET_PATH, socketPathFor } from "./egress_proxy.ts";
export { TlsAuthority } from "./tls_authority.ts";
export { warmEgress } from "./warm_egress.ts";
