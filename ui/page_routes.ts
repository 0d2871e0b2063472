/**
 * The console's pages (GET) and the fragments the live script refreshes.
 *
 * @module
 */
import type { Hono } from "hono";
import { type ConsoleEnv, csrfOf } from "./auth.ts";
import type { ConsoleDeps } from "./console_deps.ts";
import type { SafeHtml } from "./html.ts";
import { page, type ViewKey } from "./layout.ts";
import { agentsBody } from "./pages/agents_page.ts";
import { approvalsBody, approvalsTable } from "./pages/approvals_page.ts";
import { auditBody } from "./pages/audit_page.ts";
import { domainsBody } from "./pages/domains_page.ts";
import { grantsBody } from "./pages/grants_page.ts";
import { notice } from "./pages/message_page.ts";
import { policiesBody } from "./pages/policies_page.ts";
import { questionsBody, questionsTable } from "./pages/questions_page.ts";
import { sessionsBody } from "./pages/sessions_page.ts";
import { AuditQuery, parseInput } from "./schemas.ts";

/** Registers the page routes on `app`. */
export function pageRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps): void {
  const { approvals, questions } = deps;
  const show = (title: string, view: ViewKey, csrf: string, body: SafeHtml) =>
    page({ title, view, csrf, body, storeDown: deps.status?.().storeAvailable === false }).value;

  const approvalsNow = async (csrf: string) =>
    approvalsTable(await approvals.list("pending"), await approvals.list("decided"), csrf);
  const questionsNow = async (csrf: string) =>
    questionsTable(await questions.list("pending"), await questions.list("answered"), csrf);

  app.get("/", async (c) => {
    const csrf = csrfOf(c.var.auth);
    const body = approvalsBody(await approvalsNow(csrf), notice(c.req.query("notice")));
    return c.html(show("Approvals", "approvals", csrf, body));
  });
  app.get("/approvals/table", async (c) => c.html((await approvalsNow(csrfOf(c.var.auth))).value));

  app.get("/questions", async (c) => {
    const csrf = csrfOf(c.var.auth);
    const body = questionsBody(await questionsNow(csrf), notice(c.req.query("notice")));
    return c.html(show("Questions", "questions", csrf, body));
  });
  app.get("/questions/table", async (c) => c.html((await questionsNow(csrfOf(c.var.auth))).value));

  app.get("/sessions", async (c) => {
    const csrf = csrfOf(c.var.auth);
    const body = sessionsBody(await deps.sessions.list(), csrf, deps.sessions.capacity?.());
    return c.html(show("Sessions", "sessions", csrf, body));
  });

  app.get("/domains", async (c) => {
    const csrf = csrfOf(c.var.auth);
    return c.html(show("Domains", "domains", csrf, domainsBody(await deps.domains.list(), csrf)));
  });

  app.get("/agents", async (c) => {
    const csrf = csrfOf(c.var.auth);
    return c.html(show("Agents", "agents", csrf, agentsBody(await deps.agents.list(), csrf)));
  });

  app.get("/grants", async (c) => {
    const csrf = csrfOf(c.var.auth);
    const body = grantsBody(await deps.grants.list(), csrf, notice(c.req.query("notice")));
    return c.html(show("Grants", "grants", csrf, body));
  });

  app.get("/audit", async (c) => {
    const csrf = csrfOf(c.var.auth);
    const filter = parseInput(AuditQuery, c.req.query());
    const [rows, check] = await Promise.all([deps.audit.rows(filter), deps.audit.verify()]);
    return c.html(show("Audit", "audit", csrf, auditBody(rows, filter, check)));
  });

  app.get("/policies", async (c) => {
    const csrf = csrfOf(c.var.auth);
    return c.html(show("Policies", "policies", csrf, policiesBody(await deps.policies.modules())));
  });
}
