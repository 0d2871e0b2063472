/**
 * Headers every console response carries: a CSP that allows only the console's own
 * stylesheet and script (no inline code, no other origin, no framing), no sniffing, no
 * referrer, no caching (pages show keys and pending requests).
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";

/** The console's Content-Security-Policy. */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "script-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

const HEADERS: Record<string, string> = {
  "Content-Security-Policy": CONSOLE_CSP,
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

/** Middleware: sets the headers on whatever response comes back, errors and 404s included. */
export function secureHeaders(): MiddlewareHandler {
  return async function secureHeaders(c, next) {
    await next();
    for (const [name, value] of Object.entries(HEADERS)) c.res.headers.set(name, value);
  };
}
