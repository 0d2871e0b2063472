/**
 * The JSON API under `/api/` (docs/api.md): what the pages show and do, for scripts
 * (`Authorization: Bearer <admin token>`) and for the console's own script (cookie plus
 * `X-CSRF-Token`).
 *
 * @module
 */
import type { Context, Hono } from "hono";
import { type ConsoleEnv, doorOf } from "./auth.ts";
import { ConsoleError } from "./console_error.ts";
import type { ConsoleDeps } from "./console_deps.ts";
import { jsonBody } from "./request_body.ts";
import {
  AgentBody,
  AgentNameBody,
  AnswerBody,
  ApprovalStateQuery,
  AuditQuery,
  DecisionBody,
  DomainBody,
  DomainOriginBody,
  GrantBody,
  parseInput,
  QuestionStateQuery,
} from "./schemas.ts";
import { auditExport } from "./audit_export.ts";
import { eventStream } from "./event_stream.ts";
import type { OperatorSessionStore } from "./operator_sessions.ts";

/** 409 and 404 for the two ways a decision or an answer can miss. */
function settled(result: "ok" | "not_pending" | "unknown", what: string): void {
  if (result === "not_pending") {
    throw new ConsoleError(409, "NOT_PENDING", `the ${what} is no longer pending`);
  }
  if (result === "unknown") throw new ConsoleError(404, "NOT_FOUND", `no such ${what}`);
}

/** 404 and 409 for the ways a grant's approval or revocation can miss. */
export function grantSettled(result: GrantOutcome): void {
  if (result === "unknown") throw new ConsoleError(404, "NOT_FOUND", "no such grant");
  if (result === "not_pending") {
    throw new ConsoleError(
      409,
      "NOT_PENDING",
      "the grant is not pending: approved, expired or revoked",
    );
  }
  if (result === "already_revoked") {
    throw new ConsoleError(409, "ALREADY_REVOKED", "the grant was revoked already");
  }
}

/** How a grant's approval or revocation ended, as the console answers it. */
export type GrantOutcome = "ok" | "not_pending" | "already_revoked" | "unknown";

/**
 * Runs a grant's `approve` or `revoke`: a refusal for a grant that is unknown or no longer in
 * that state is an answer (404, 409), not an error; anything else (`GRANTS_UNAVAILABLE`,
 * `AUDIT_UNAVAILABLE`, …) goes up with its code.
 */
export async function grantOutcome(
  action: "approve" | "revoke",
  run: () => Promise<unknown>,
): Promise<GrantOutcome> {
  try {
    await run();
    return "ok";
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (code === "GRANT_NOT_FOUND") return "unknown";
    if (action === "revoke" && code === "GRANT_REVOKED") return "already_revoked";
    if (
      action === "approve" &&
      (code === "GRANT_NOT_PENDING" || code === "GRANT_REVOKED" || code === "GRANT_EXPIRED")
    ) {
      return "not_pending";
    }
    throw err;
  }
}

/** The body of a DELETE: JSON, or the query when there is none. */
async function deleteBody(c: Context<ConsoleEnv>): Promise<unknown> {
  const query = c.req.query();
  return Object.keys(query).length > 0 ? query : await jsonBody(c);
}

/** Registers the `/api/*` routes on `app`. */
export function apiRoutes(
  app: Hono<ConsoleEnv>,
  deps: ConsoleDeps,
  sessions: OperatorSessionStore,
): void {
  const { approvals, questions } = deps;

  app.get("/api/approvals", async (c) => {
    const state = parseInput(ApprovalStateQuery, c.req.query("state"));
    return c.json(await approvals.list(state));
  });
  app.post("/api/approvals/:id", async (c) => {
    const { decision } = parseInput(DecisionBody, await jsonBody(c));
    const id = c.req.param("id");
    settled(await approvals.decide(id, decision, doorOf(c.var.auth)), "approval");
    const record = (await approvals.list()).find((a) => a.id === id);
    return c.json({ id, state: record?.state ?? (decision === "approve" ? "approved" : "denied") });
  });

  app.get("/api/questions", async (c) => {
    const state = parseInput(QuestionStateQuery, c.req.query("state"));
    return c.json(await questions.list(state));
  });
  app.post("/api/questions/:id", async (c) => {
    const { answer } = parseInput(AnswerBody, await jsonBody(c));
    const id = c.req.param("id");
    settled(await questions.answer(id, answer, doorOf(c.var.auth)), "question");
    return c.json({ id, state: "answered" });
  });

  app.get("/api/sessions", async (c) => c.json(await deps.sessions.list()));
  app.get("/api/status", (c) => c.json(deps.status?.() ?? { storeAvailable: true }));
  app.get("/api/capacity", (c) => {
    const capacity = deps.sessions.capacity?.();
    if (!capacity) {
      throw new ConsoleError(404, "NOT_FOUND", "this runtime does not report capacity");
    }
    return c.json(capacity);
  });
  app.post("/api/sessions/:id/kill", async (c) => {
    if (!await deps.sessions.kill(c.req.param("id"))) {
      throw new ConsoleError(404, "NOT_FOUND", "no such session");
    }
    return c.json({ killed: true });
  });

  app.get("/api/agents", async (c) => c.json(await deps.agents.list()));
  app.post("/api/agents", async (c) => {
    const { name, policy } = parseInput(AgentBody, await jsonBody(c));
    const made = await deps.agents.add(name, policy);
    // The only time the key leaves the runtime; Cache-Control: no-store is on every answer.
    return c.json({ name: made.name, key: made.key }, 201);
  });
  app.delete("/api/agents", async (c) => {
    const { name } = parseInput(AgentNameBody, await deleteBody(c));
    if (!await deps.agents.remove(name)) throw new ConsoleError(404, "NOT_FOUND", "no such agent");
    return c.json({ removed: true });
  });

  app.get("/api/domains", async (c) => c.json(await deps.domains.list()));
  app.post("/api/domains", async (c) => {
    const { origin, rule } = parseInput(DomainBody, await jsonBody(c));
    const normalized = await deps.domains.add(origin, rule);
    return c.json({ origin: typeof normalized === "string" ? normalized : origin, rule }, 201);
  });
  app.delete("/api/domains", async (c) => {
    const { origin } = parseInput(DomainOriginBody, await deleteBody(c));
    if (!await deps.domains.remove(origin)) {
      throw new ConsoleError(404, "NOT_FOUND", "no rule for that origin");
    }
    return c.json({ removed: true });
  });

  app.get("/api/grants", async (c) => c.json(await deps.grants.list()));
  app.post("/api/grants", async (c) => {
    const { approve, ...request } = parseInput(GrantBody, await jsonBody(c));
    const grant = await deps.grants.add(request, {
      approve: approve === true,
      by: doorOf(c.var.auth),
    });
    return c.json(grant, 201);
  });
  app.post("/api/grants/:id/approve", async (c) => {
    const id = c.req.param("id");
    grantSettled(
      await grantOutcome("approve", () => deps.grants.approve(id, { by: doorOf(c.var.auth) })),
    );
    return c.json({ id, state: "active" });
  });
  const revoke = async (c: Context<ConsoleEnv>) => {
    const id = c.req.param("id") ?? "";
    grantSettled(
      await grantOutcome("revoke", () => deps.grants.revoke(id, { by: doorOf(c.var.auth) })),
    );
    return c.json({ id, state: "revoked" });
  };
  app.post("/api/grants/:id/revoke", revoke);
  app.delete("/api/grants/:id", revoke);

  app.get("/api/audit", async (c) => {
    const filter = parseInput(AuditQuery, c.req.query());
    return c.json(await deps.audit.rows(filter));
  });
  app.get("/api/audit/verify", async (c) => c.json(await deps.audit.verify()));
  app.get("/api/audit/export", () => auditExport(deps.audit));

  app.get("/api/policies", async (c) => c.json(await deps.policies.modules()));

  app.get("/api/events", (c) => {
    const auth = c.var.auth;
    // A stream outlives its request: it ends when its session does (logout, idle).
    const alive = async () => auth.kind === "bearer" || await sessions.alive(auth.session);
    return eventStream(c, deps, alive);
  });
}
