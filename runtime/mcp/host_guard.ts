/**
 * Refuses requests whose Host or Origin is not the address the server is bound to, so a
 * web page cannot reach the MCP endpoint through DNS rebinding.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { bracketHost } from "../net/mod.ts";

/** The Host header values under which a server bound to `host:port` may be addressed. */
export function allowedHostsFor(host: string, port: number): string[] {
  const h = host.toLowerCase();
  const names = [bracketHost(h)];
  if (h === "127.0.0.1" || h === "::1" || h === "[::1]") names.push("localhost");
  return names.map((n) => `${n}:${port}`);
}

/** Middleware factory: 403 unless Host (and Origin, when present) name an allowed host. */
export function hostGuard(allowedHosts: readonly string[]): MiddlewareHandler {
  const hosts = new Set(allowedHosts.map((h) => h.toLowerCase()));
  const origins = new Set([...hosts].map((h) => `http://${h}`));
  return async function hostGuard(c, next) {
    const host = c.req.header("host")?.toLowerCase();
    if (!host || !hosts.has(host)) {
      throw new HTTPException(403, { message: "forbidden: unexpected Host header" });
    }
    const origin = c.req.header("origin")?.toLowerCase();
    if (origin !== undefined && !origins.has(origin)) {
      throw new HTTPException(403, { message: "forbidden: unexpected Origin header" });
    }
    await next();
  };
}
