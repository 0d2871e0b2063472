/**
 * The operator console: server-rendered pages and a JSON API to approve or deny pending
 * writes, answer agents' questions, watch and kill sessions, manage domain rules, agent keys
 * and grants, and read the audit. One Hono app; `cli/start.ts` serves it beside the MCP app and
 * sends it the paths `isConsolePath()` names.
 *
 * Every response carries the secure headers; the Host (and Origin) must be the console's
 * own; bodies over 64 KiB are refused (413); errors become responses in `onError` only.
 *
 * @module
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { apiRoutes } from "./api_routes.ts";
import { authenticate, type ConsoleEnv, csrfOf } from "./auth.ts";
import { CONSOLE_CSS } from "./console_css.ts";
import type { ConsoleDeps } from "./console_deps.ts";
import { ConsoleError, errorAnswer } from "./console_error.ts";
import { CONSOLE_JS } from "./console_js.ts";
import { FailureLimiter } from "./failure_limiter.ts";
import { formRoutes } from "./form_routes.ts";
import { hostCheck } from "./host_check.ts";
import { loginRoutes } from "./login_routes.ts";
import { OperatorSessions } from "./operator_sessions.ts";
import { pageRoutes } from "./page_routes.ts";
import { loginPage } from "./pages/login_page.ts";
import { errorPage } from "./pages/message_page.ts";
import { secureHeaders } from "./secure_headers.ts";

export type { ConsoleDeps } from "./console_deps.ts";
export type { ConsoleEnv } from "./auth.ts";

/** Exact paths of the console (the MCP app keeps `/mcp`, `/sse`, `/messages`). */
const EXACT = new Set([
  "/",
  "/login",
  "/logout",
  "/console.css",
  "/console.js",
  "/questions",
  "/sessions",
  "/domains",
  "/agents",
  "/grants",
  "/audit",
  "/policies",
]);

/** Path prefixes of the console. */
const PREFIXES = [
  "/api/",
  "/approvals/",
  "/questions/",
  "/sessions/",
  "/domains/",
  "/agents/",
  "/grants/",
];

/** True for the paths the console owns; the server sends the rest to the MCP app. */
export function isConsolePath(pathname: string): boolean {
  return EXACT.has(pathname) || PREFIXES.some((p) => pathname.startsWith(p));
}

/** Builds the console app. */
export function createConsoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  if (deps.adminToken.length === 0) throw new Error("the console needs a non-empty admin token");
  const now = deps.now ?? Date.now;
  const sessions = new OperatorSessions({ now });
  const limiter = new FailureLimiter({ now });
  const report = deps.log ?? ((line: string) => console.error(`omotai: ${line}`));
  const app = new Hono<ConsoleEnv>();

  app.onError((err, c) => {
    const answer = err instanceof HTTPException
      ? { status: err.status, code: "HTTP_ERROR", message: err.message, headers: {} }
      : errorAnswer(err);
    if (answer.status === 500) report(`console error: ${err.name}`);
    for (const [name, value] of Object.entries(answer.headers)) c.header(name, value);
    if (c.req.path.startsWith("/api/")) {
      return c.json({ error: answer.code, message: answer.message }, answer.status);
    }
    if (c.req.path === "/login") return c.html(loginPage(answer.message).value, answer.status);
    const csrf = c.var.auth ? csrfOf(c.var.auth) : "";
    return c.html(errorPage(answer.status, answer.message, csrf).value, answer.status);
  });
  app.notFound(() => {
    throw new ConsoleError(404, "NOT_FOUND", "no such page");
  });

  app.use("*", secureHeaders());
  app.use("*", hostCheck(deps.allowedHosts));
  app.use(
    "*",
    bodyLimit({
      maxSize: deps.maxBodyBytes ?? 64 * 1024,
      onError: () => {
        throw new ConsoleError(413, "BODY_TOO_LARGE", "the request body is too large");
      },
    }),
  );
  app.use("*", authenticate({ adminToken: deps.adminToken, sessions, limiter }));

  app.get("/console.css", (c) => c.body(CONSOLE_CSS, 200, { "Content-Type": "text/css" }));
  app.get(
    "/console.js",
    (c) => c.body(CONSOLE_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }),
  );

  loginRoutes(app, deps.adminToken, sessions, limiter);
  pageRoutes(app, deps);
  formRoutes(app, deps);
  apiRoutes(app, deps, sessions);
  return app;
}
