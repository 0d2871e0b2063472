/**
 * What the pages' forms post to. Each answers with a redirect back to its page (so a reload
 * does not post again), except adding an agent: that page shows the new key, once.
 *
 * @module
 */
import type { Hono } from "hono";
import { type ConsoleEnv, csrfOf, doorOf } from "./auth.ts";
import { grantOutcome } from "./api_routes.ts";
import { ConsoleError } from "./console_error.ts";
import type { ConsoleDeps } from "./console_deps.ts";
import { page } from "./layout.ts";
import { newKeyBody } from "./pages/agents_page.ts";
import { formBody } from "./request_body.ts";
import {
  AgentBody,
  AgentNameBody,
  AnswerBody,
  DecisionBody,
  DomainBody,
  DomainOriginBody,
  GrantBody,
  GrantForm,
  grantFormBody,
  parseInput,
} from "./schemas.ts";

/** Registers the form routes on `app`. */
export function formRoutes(app: Hono<ConsoleEnv>, deps: ConsoleDeps): void {
  app.post("/approvals/:id", async (c) => {
    const { decision } = parseInput(DecisionBody, await formBody(c));
    const result = await deps.approvals.decide(c.req.param("id"), decision, doorOf(c.var.auth));
    return c.redirect(result === "ok" ? "/" : `/?notice=${result}`, 303);
  });

  app.post("/questions/:id", async (c) => {
    const { answer } = parseInput(AnswerBody, await formBody(c));
    const result = await deps.questions.answer(c.req.param("id"), answer, doorOf(c.var.auth));
    return c.redirect(result === "ok" ? "/questions" : `/questions?notice=${result}`, 303);
  });

  app.post("/sessions/:id/kill", async (c) => {
    if (!await deps.sessions.kill(c.req.param("id"))) {
      throw new ConsoleError(404, "NOT_FOUND", "no such session (it may have ended already)");
    }
    return c.redirect("/sessions", 303);
  });

  app.post("/domains", async (c) => {
    const { origin, rule } = parseInput(DomainBody, await formBody(c));
    await deps.domains.add(origin, rule);
    return c.redirect("/domains", 303);
  });
  app.post("/domains/remove", async (c) => {
    const { origin } = parseInput(DomainOriginBody, await formBody(c));
    if (!await deps.domains.remove(origin)) {
      throw new ConsoleError(404, "NOT_FOUND", "no rule for that origin");
    }
    return c.redirect("/domains", 303);
  });

  app.post("/grants", async (c) => {
    const form = parseInput(GrantForm, await formBody(c));
    const { approve, ...request } = parseInput(GrantBody, grantFormBody(form));
    await deps.grants.add(request, { approve: approve === true, by: doorOf(c.var.auth) });
    return c.redirect("/grants", 303);
  });
  app.post("/grants/:id/approve", async (c) => {
    const id = c.req.param("id");
    const result = await grantOutcome(
      "approve",
      () => deps.grants.approve(id, { by: doorOf(c.var.auth) }),
    );
    return c.redirect(result === "ok" ? "/grants" : `/grants?notice=grant_${result}`, 303);
  });
  app.post("/grants/:id/revoke", async (c) => {
    const id = c.req.param("id");
    const result = await grantOutcome(
      "revoke",
      () => deps.grants.revoke(id, { by: doorOf(c.var.auth) }),
    );
    return c.redirect(result === "ok" ? "/grants" : `/grants?notice=grant_${result}`, 303);
  });

  app.post("/agents", async (c) => {
    const { name, policy } = parseInput(AgentBody, await formBody(c));
    const made = await deps.agents.add(name, policy);
    const body = newKeyBody(made.name, made.key);
    return c.html(
      page({ title: "Agent added", view: "agents", csrf: csrfOf(c.var.auth), body }).value,
    );
  });
  app.post("/agents/remove", async (c) => {
    const { name } = parseInput(AgentNameBody, await formBody(c));
    if (!await deps.agents.remove(name)) throw new ConsoleError(404, "NOT_FOUND", "no such agent");
    return c.redirect("/agents", 303);
  });
}
