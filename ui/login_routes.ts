/**
 * `GET/POST /login` and `POST /logout`. A good admin token starts a session (HttpOnly,
 * SameSite=Strict cookie); a wrong one is a 401 and counts against the client, five in a
 * minute and it gets 429 until the minute has passed, even with the right token. A session
 * store that cannot answer (the shared database is down) is a 503: no session is started,
 * and a logout it could not record keeps the cookie, so the operator can try again.
 *
 * @module
 */
import type { Hono } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import {
  adminTokenIs,
  clientOf,
  type ConsoleEnv,
  refuseIfLimited,
  SESSION_COOKIE,
} from "./auth.ts";
import { ConsoleError } from "./console_error.ts";
import type { FailureLimiter } from "./failure_limiter.ts";
import type { OperatorSession, OperatorSessionStore } from "./operator_sessions.ts";
import { loginPage } from "./pages/login_page.ts";
import type { AdminCredential } from "./secrets.ts";

/** Registers the login routes on `app`. */
export function loginRoutes(
  app: Hono<ConsoleEnv>,
  adminToken: AdminCredential,
  sessions: OperatorSessionStore,
  limiter: FailureLimiter,
): void {
  app.get("/login", (c) => c.html(loginPage().value));

  app.post("/login", async (c) => {
    const client = clientOf(c);
    refuseIfLimited(limiter, client);
    const body = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
    const token = typeof body.token === "string" ? body.token : "";
    if (!adminTokenIs(token, adminToken)) {
      limiter.fail(client);
      throw new ConsoleError(401, "UNAUTHORIZED", "That is not the admin token.");
    }
    const session = await sessions.create().catch((): OperatorSession | undefined => undefined);
    if (!session) {
      throw new ConsoleError(
        503,
        "SESSIONS_UNAVAILABLE",
        "The console cannot start a session now; try again shortly.",
        { "Retry-After": "5" },
      );
    }
    // No Max-Age: the browser forgets it when it closes; the server ends it after 12 h idle.
    setCookie(c, SESSION_COOKIE, session.id, { httpOnly: true, sameSite: "Strict", path: "/" });
    return c.redirect("/", 303);
  });

  app.post("/logout", async (c) => {
    const auth = c.var.auth;
    if (auth.kind === "cookie" && !await sessions.end(auth.session).catch(() => false)) {
      // The session lives on: say so, and keep the cookie so that logging out can be retried.
      throw new ConsoleError(
        503,
        "SESSIONS_UNAVAILABLE",
        "The session could not be ended now; log out again shortly.",
        { "Retry-After": "5" },
      );
    }
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.redirect("/login", 303);
  });
}
