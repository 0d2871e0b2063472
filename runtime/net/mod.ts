/**
 * The door of runtime/net/ (origins, paths, addresses, hosts, URL display): other folders import
 * from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { addressRule } from "./address_rule.ts";
export type { AddressFacts, AddressRefusal } from "./address_rule.ts";
export { displayUrl } from "./display_url.ts";
export { bracketHost } from "./host.ts";
export { normalizeOrigin } from "./origin.ts";
export { canonicalPath } from "./paths.ts";
export { requestView } from "./request_view.ts";
export type { RequestView, ShownEntry } from "./request_view.ts";
export { parseRequestView } from "./request_view_schema.ts";
export { escapeText } from "./shown_text.ts";
export type { ShownText, TextFlag } from "./shown_text.ts";
