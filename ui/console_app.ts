/**
 * The operator console: server-rendered pages and a JSON API to approve or deny pending
 * writes, answer agents' questions, watch and kill sessions, manage domain rules, agent keys
 * and grants, and read the audit. One Hono app; `cli/start.ts` serves it beside the MCP app and
 * sends it the paths `isConsolePath()` names (derived from the route table).
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
import { OperatorSessions, type OperatorSessionStore } from "./operator_sessions.ts";
import { pageRoutes } from "./page_routes.ts";
import { loginPage } from "./pages/login_page.ts";
import { errorPage } from "./pages/message_page.ts";
import { secureHeaders } from "./secure_headers.ts";

export type { ConsoleDeps } from "./console_deps.ts";
export type { ConsoleEnv } from "./auth.ts";

/** Paths the console owns, derived once from its route table. */
let owned: ((pathname: string) => boolean) | undefined;

/**
 * True for the paths the console owns; the server sends the rest to the MCP app (which keeps
 * `/mcp`, `/sse`, `/messages`). Derived from the route table (`consoleRoutePaths()`), never
 * kept by hand.
 */
export function isConsolePath(pathname: string): boolean {
  owned ??= ownedPaths(consoleRoutePaths());
  return owned(pathname);
}

/**
 * The console's route table: the path of every route `createConsoleApp()` registers. The
 * routes are registered on a bare app whose handlers never run, so no deps are needed.
 */
export function consoleRoutePaths(): string[] {
  const app = new Hono<ConsoleEnv>();
  registerRoutes(app, {} as ConsoleDeps, new OperatorSessions(), new FailureLimiter());
  return [...new Set(app.routes.map((r) => r.path).filter((p) => !p.includes("*")))];
}

/**
 * What a route table owns: a one-segment route's exact path (`/`, `/login`, `/grants`), and
 * everything below the first segment of a deeper route (`/api/approvals` owns `/api/…`, so an
 * unknown `/api/x` is the console's 404, not the MCP app's).
 */
export function ownedPaths(paths: readonly string[]): (pathname: string) => boolean {
  const exact = new Set<string>();
  const prefixes = new Set<string>();
  for (const path of paths) {
    const segments = path.split("/");
    if (segments.length > 2) prefixes.add(`/${segments[1]}/`);
    else exact.add(path);
  }
  return (pathname) => exact.has(pathname) || [...prefixes].some((p) => pathname.startsWith(p));
}

/** Builds the console app. */
export function createConsoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  if (deps.adminToken === "") throw new Error("the console needs a non-empty admin token");
  const now = deps.now ?? Date.now;
  const sessions = deps.operatorSessions ?? new OperatorSessions({ now });
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

  registerRoutes(app, deps, sessions, limiter);
  return app;
}

/** The console's route table: every route, on `app` (`createConsoleApp`, `consoleRoutePaths`). */
function registerRoutes(
  app: Hono<ConsoleEnv>,
  deps: ConsoleDeps,
  sessions: OperatorSessionStore,
  limiter: FailureLimiter,
): void {
  app.get("/console.css", (c) => c.body(CONSOLE_CSS, 200, { "Content-Type": "text/css" }));
  app.get(
    "/console.js",
    (c) => c.body(CONSOLE_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }),
  );
  loginRoutes(app, deps.adminToken, sessions, limiter);
  pageRoutes(app, deps);
  formRoutes(app, deps);
  apiRoutes(app, deps, sessions);
}
