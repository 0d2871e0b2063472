/**
 * The HTTP face of the runtime: legacy SSE (`GET /sse`, `POST /messages`) and Streamable
 * HTTP (`/mcp`) from one Hono app, assembled here from its parts: the transports' routes
 * (`mcp_routes.ts`), the session table (`mcp_session_table.ts`), the places new sessions take
 * (`session_places.ts`), the idle sweeper (`idle_sweeper.ts`), and the one place errors
 * become responses (`http_errors.ts`). Each connection gets its own MCP server and browser.
 * With `authenticate`, every request to a transport's path needs an agent key, checked anew
 * each time, and a session belongs to the agent whose key opened it.
 *
 * @module
 */
import { Hono } from "hono";
import type { AgentInfo } from "../store/mod.ts";
import { log } from "../mod.ts";
import { type AgentEnv, agentGuard, type Authenticate } from "./agent_guard.ts";
import { hostGuard } from "./host_guard.ts";
import { httpErrorHandler } from "./http_errors.ts";
import { IdleSweeper } from "./idle_sweeper.ts";
import { MCP_ROUTES, mountRoutes, routesIndex } from "./mcp_routes.ts";
import { McpSessionTable } from "./mcp_session_table.ts";
import { type CapacityCode, SessionPlaces } from "./session_places.ts";
import { type NewServer, sessionAdmission, type TransportDeps } from "./transport_deps.ts";

export { RETRY_AFTER_S } from "./http_errors.ts";

/** Options of `createHttpApp()`. */
export interface HttpAppOptions {
  /** Host header values the app answers to (see `allowedHostsFor`). */
  allowedHosts: readonly string[];
  /**
   * Builds the MCP server of a new connection, for the agent whose key opened it (undefined
   * without `authenticate`): its identity comes from the key, never from the client's
   * self-declared name.
   */
  newServer: NewServer;
  /**
   * When set, the transports' paths (`/mcp`, `/sse`, `/messages`) answer only requests with
   * `Authorization: Bearer <token>` for which this returns an agent (typically
   * `AgentStore.verify`); anything else gets 401. Called on every request, so a removed key
   * stops working at once. The admin token is not an agent key: it fails here like any other.
   */
  authenticate?: Authenticate;
  /**
   * Streamable HTTP sessions idle this long are closed, their browser with them; default 30
   * minutes. Idle means no request and no POST answer still streaming (a long tool call is
   * not idleness). A legacy SSE session needs none: it ends when its stream's connection does.
   */
  idleTimeoutMs?: number;
  /**
   * Sessions this runtime holds at once (both transports). One more is answered 503 with
   * `Retry-After` (`SERVER_BUSY`), before any browser starts, so a load balancer sends it to
   * another runtime; none: no cap.
   */
  maxSessions?: number;
  /**
   * Sessions one agent may hold at once on this runtime (`cli/session_cap.ts`: its policy's
   * `max_sessions`, else its share of `maxSessions`); undefined: none of its own. One more of
   * its own is answered 503 with `Retry-After` (`AGENT_BUSY`), before any browser starts,
   * while other agents still get in. A rejection refuses the session (its policy cannot be
   * read). Without it, only `maxSessions` applies.
   */
  agentMaxSessions?: (agent: AgentInfo) => Promise<number | undefined>;
  /** Told of each session refused for capacity (to audit it); must not throw. */
  onRefused?: (code: CapacityCode, agent: AgentInfo | undefined) => void;
}

/** The app plus a way to close every open connection. */
export interface HttpApp {
  app: Hono<AgentEnv>;
  /** Number of open MCP connections (both transports). */
  connectionCount(): number;
  /** The session cap (`maxSessions`), if any. */
  readonly maxSessions: number | undefined;
  /**
   * Closes every open connection (both transports) of the agent `name`, their browsers with
   * them; returns how many. With `createdAt`, only those opened with the key made then (a
   * removed key's, not a re-added one's). For a removed agent: its key is refused already,
   * this ends its streams too.
   */
  closeAgent(name: string, createdAt?: string): Promise<number>;
  /** The agents (name and key's creation) holding an open connection now, each once. */
  heldAgents(): { name: string; createdAt: string }[];
  /** Closes every connection (their browsers stop). */
  closeAll(): Promise<void>;
}

/** Builds the MCP HTTP app. */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const sessions = new McpSessionTable();
  const deps: TransportDeps = {
    sessions,
    newServer: options.newServer,
    admit: sessionAdmission({
      places: new SessionPlaces({ max: options.maxSessions, held: () => sessions.agents() }),
      agentMaxSessions: options.agentMaxSessions,
      onRefused: options.onRefused,
    }),
  };
  // What the app owns besides its sessions, each registered here when made; `closeAll()`
  // (on the runtime's teardown) disposes them.
  const owned = new DisposableStack();
  owned.use(
    new IdleSweeper({
      idleMs: options.idleTimeoutMs ?? 30 * 60_000,
      sessions: () => sessions.of("streamable"),
      end: (idle) => {
        log("closing an idle Streamable HTTP session");
        void sessions.end((s) => s === idle);
      },
    }),
  );

  const app = new Hono<AgentEnv>();
  app.onError(httpErrorHandler);
  app.use("*", hostGuard(options.allowedHosts));
  app.get("/", (c) => c.text(routesIndex(MCP_ROUTES)));
  mountRoutes(
    app,
    MCP_ROUTES,
    deps,
    options.authenticate ? agentGuard(options.authenticate) : undefined,
  );

  return {
    app,
    connectionCount: () => sessions.count(),
    maxSessions: options.maxSessions,
    heldAgents: () => sessions.heldAgents(),
    closeAgent: (name, createdAt) =>
      sessions.end(({ agent }) =>
        agent?.name === name && (createdAt === undefined || agent.createdAt === createdAt)
      ),
    async closeAll() {
      owned.dispose();
      await sessions.end(() => true);
    },
  };
}
