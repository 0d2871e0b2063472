/**
 * The door of runtime/mcp/ (MCP server per connection, HTTP app, transports): other folders import
 * from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { allowedHostsFor } from "./host_guard.ts";
export { createHttpApp } from "./http_app.ts";
export type { HttpApp } from "./http_app.ts";
export { createMcpServer } from "./server.ts";
