/**
 * Who is asking, and may they: the admin token is the console's only credential. A browser
 * logs in with it once and then carries a session cookie, whose state changes need the
 * session's CSRF token; a script sends it as `Authorization: Bearer` to `/api/*` and needs
 * no CSRF token (no browser attaches that header on its own). An agent key is not the admin
 * token, so it opens nothing here.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { ConsoleError } from "./console_error.ts";
import type { FailureLimiter } from "./failure_limiter.ts";
import type { OperatorSession, OperatorSessionStore } from "./operator_sessions.ts";
import { type AdminCredential, isAdminToken, sameSecret } from "./secrets.ts";

/** The session cookie's name. */
export const SESSION_COOKIE = "omotai_console";

/** How a request was authenticated. */
export type Auth =
  | { readonly kind: "cookie"; readonly session: string; readonly csrf: string }
  | { readonly kind: "bearer" };

/** The console app's Hono environment. */
export interface ConsoleEnv {
  Variables: { auth: Auth };
}

/** What the middleware checks against. */
export interface AuthOptions {
  adminToken: AdminCredential;
  sessions: OperatorSessionStore;
  limiter: FailureLimiter;
}

/** Paths anyone may fetch: the login form (and its stylesheet). */
const PUBLIC = new Set(["/login", "/console.css"]);

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The client a failed attempt is counted against: its address when the server gave one. */
export function clientOf(c: Context): string {
  const env = c.env as { remoteAddr?: { hostname?: string } } | undefined;
  return env?.remoteAddr?.hostname ?? "local";
}

/** 429 when `client` failed too often lately. */
export function refuseIfLimited(limiter: FailureLimiter, client: string): void {
  const wait = limiter.retryAfter(client);
  if (wait > 0) {
    throw new ConsoleError(
      429,
      "TOO_MANY_ATTEMPTS",
      `too many failed attempts; retry in ${wait} s`,
      {
        "Retry-After": String(wait),
      },
    );
  }
}

/**
 * Whether `presented` is the admin token. A credential that cannot be checked now (a shared
 * store that does not answer) is a 503, never a wrong guess: nothing is counted against an
 * operator whose token may be right.
 */
export function adminTokenIs(presented: string, credential: AdminCredential): boolean {
  try {
    return isAdminToken(presented, credential);
  } catch {
    throw new ConsoleError(
      503,
      "AUTH_UNAVAILABLE",
      "the admin token cannot be checked now; retry shortly",
      { "Retry-After": "5" },
    );
  }
}

/** Middleware: sets `auth`, or answers 401/403/429 (a page request without a session: to login). */
export function authenticate(options: AuthOptions): MiddlewareHandler<ConsoleEnv> {
  const { adminToken, sessions, limiter } = options;
  return async function authenticate(c, next) {
    if (PUBLIC.has(c.req.path)) return await next();
    const api = c.req.path.startsWith("/api/");
    const header = c.req.header("authorization");
    if (api && header !== undefined) {
      const client = clientOf(c);
      refuseIfLimited(limiter, client);
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!m || !adminTokenIs(m[1], adminToken)) {
        limiter.fail(client);
        throw new ConsoleError(401, "UNAUTHORIZED", "the bearer token is not the admin token");
      }
      c.set("auth", { kind: "bearer" });
      return await next();
    }
    const session = await liveSession(sessions, getCookie(c, SESSION_COOKIE));
    if (!session) {
      if (!api && c.req.method === "GET") return c.redirect("/login", 303);
      throw new ConsoleError(401, "UNAUTHORIZED", "log in first");
    }
    if (!SAFE_METHODS.has(c.req.method)) {
      const token = c.req.header("x-csrf-token") ?? await formCsrf(c);
      if (token === undefined || !sameSecret(token, session.csrf)) {
        throw new ConsoleError(403, "CSRF_REQUIRED", "missing or wrong CSRF token");
      }
    }
    c.set("auth", { kind: "cookie", session: session.id, csrf: session.csrf });
    await next();
  };
}

/**
 * The live session a cookie names, its idle clock restarted. Fails closed: a store that
 * throws (it should answer undefined) counts as no session, so the request is sent to the
 * login form or answered 401, never 500.
 */
async function liveSession(
  sessions: OperatorSessionStore,
  id: string | undefined,
): Promise<OperatorSession | undefined> {
  if (!id) return undefined;
  try {
    return await sessions.touch(id);
  } catch {
    return undefined;
  }
}

/** The `csrf` field of a form body (the body stays readable: Hono caches it). */
async function formCsrf(c: Context): Promise<string | undefined> {
  const type = c.req.header("content-type") ?? "";
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(type)) return undefined;
  const body = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
  return typeof body.csrf === "string" ? body.csrf : undefined;
}

/** The CSRF token of a cookie session (empty for bearer requests, which render no forms). */
export function csrfOf(auth: Auth): string {
  return auth.kind === "cookie" ? auth.csrf : "";
}

/** Who decided, as the audit's `rule` records it. */
export function doorOf(auth: Auth): "console" | "api" {
  return auth.kind === "cookie" ? "console" : "api";
}
