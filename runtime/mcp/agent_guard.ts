/**
 * The MCP door's lock: a request passes only with `Authorization: Bearer <agent key>` of an
 * agent that exists at that moment. Every refusal looks the same (401, one body, one
 * `WWW-Authenticate`), so a caller learns nothing about which part was wrong.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import type { AgentInfo } from "../store/mod.ts";
import { log } from "../mod.ts";

/** Hono context of the HTTP app: the agent the request's key belongs to, if keys are on. */
export interface AgentEnv {
  Variables: { agent: AgentInfo | undefined };
}

/**
 * Answers a bearer token with its agent, or undefined (see `AgentStore.verify`); throwing or
 * rejecting means the keys cannot be read.
 */
export type Authenticate = (
  bearerToken: string,
) => AgentInfo | undefined | Promise<AgentInfo | undefined>;

const CHALLENGE = 'Bearer realm="omotai"';

/** The token of an `Authorization: Bearer <token>` header (RFC 6750), else undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return header?.match(/^Bearer +([\x21-\x7e]+) *$/i)?.[1];
}

/** True when two requests' agents are the same agent (same name, same key issued). */
export function sameAgent(a: AgentInfo | undefined, b: AgentInfo | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.name === b.name &&
    a.createdAt === b.createdAt);
}

/**
 * Middleware factory: 401 unless the request carries a key `authenticate` accepts; sets the
 * context's `agent`. A key store that cannot be read answers 503: the door stays shut.
 */
export function agentGuard(authenticate: Authenticate): MiddlewareHandler<AgentEnv> {
  return async function agentGuard(c, next) {
    const token = bearerToken(c.req.header("authorization"));
    let agent: AgentInfo | undefined;
    if (token !== undefined) {
      try {
        agent = await authenticate(token);
      } catch (err) {
        log(`agent keys unavailable: ${(err as { code?: string }).code ?? (err as Error).name}`);
        return c.json({ error: "AUTH_UNAVAILABLE" }, 503);
      }
    }
    if (!agent) return c.json({ error: "UNAUTHORIZED" }, 401, { "WWW-Authenticate": CHALLENGE });
    c.set("agent", agent);
    return await next();
  };
}
