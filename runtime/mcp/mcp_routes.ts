/**
 * The MCP transports as data: each one's method, path and handler factory. The app mounts
 * them all the same way, so a transport added here is behind the agent-key lock without a
 * second list to keep in step.
 *
 * @module
 */
import type { Handler, Hono, MiddlewareHandler } from "hono";
import type { AgentEnv } from "./agent_guard.ts";
import { SSE_MESSAGES_PATH, sseMessages, sseStream } from "./sse_routes.ts";
import { streamableHttp } from "./streamable_route.ts";
import type { TransportDeps } from "./transport_deps.ts";

/** One route of an MCP transport. */
export interface McpRoute {
  /** What the index page calls it. */
  name: string;
  /** An HTTP method, or `ALL` (the route answers every method). */
  method: "GET" | "POST" | "ALL";
  path: string;
  /** Builds the route's handler from the transports' one bag. */
  handler: (deps: TransportDeps) => Handler<AgentEnv>;
}

/** Every route of the MCP transports the app serves. */
export const MCP_ROUTES: readonly McpRoute[] = [
  { name: "Streamable HTTP", method: "ALL", path: "/mcp", handler: streamableHttp },
  { name: "SSE", method: "GET", path: "/sse", handler: sseStream },
  { name: "SSE messages", method: "POST", path: SSE_MESSAGES_PATH, handler: sseMessages },
];

/**
 * Mounts `routes` on `app`, each handler built from `deps`; with `guard`, every request to
 * a route's path passes it first, whatever its method (an unlisted method too: it learns
 * nothing before its key is checked).
 */
export function mountRoutes(
  app: Hono<AgentEnv>,
  routes: readonly McpRoute[],
  deps: TransportDeps,
  guard?: MiddlewareHandler<AgentEnv>,
): void {
  if (guard) { for (const { path } of routes) app.use(path, guard); }
  for (const route of routes) app.on(route.method, route.path, route.handler(deps));
}

/** The index page's text: the runtime and where each transport answers. */
export function routesIndex(routes: readonly McpRoute[]): string {
  return `Omotai MCP runtime\n${routes.map((r) => `  ${r.name}: ${r.path}\n`).join("")}`;
}
