/**
 * Refuses requests whose Host, or Origin when it names one, is not the console's own address:
 * a page elsewhere cannot reach the console through DNS rebinding, nor post to it cross-site.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import { ConsoleError } from "./console_error.ts";

/** Middleware: 403 unless Host is one of `allowedHosts` (`host:port`) and Origin matches. */
export function hostCheck(allowedHosts: readonly string[]): MiddlewareHandler {
  const hosts = new Set(allowedHosts.map((h) => h.toLowerCase()));
  const origins = new Set([...hosts].flatMap((h) => [`http://${h}`, `https://${h}`]));
  return async function hostCheck(c, next) {
    const host = c.req.header("host")?.toLowerCase();
    if (!host || !hosts.has(host)) {
      throw new ConsoleError(403, "BAD_HOST", "forbidden: unexpected Host header");
    }
    const origin = c.req.header("origin")?.toLowerCase();
    // "null" tells nothing: the console's own forms send it, since `Referrer-Policy:
    // no-referrer` makes Chromium hide the origin of a POST. A cross-site post is still
    // stopped by the SameSite=Strict cookie and the CSRF token.
    if (origin !== undefined && origin !== "null" && !origins.has(origin)) {
      throw new ConsoleError(403, "BAD_ORIGIN_HEADER", "forbidden: unexpected Origin header");
    }
    await next();
  };
}
