/**
 * The HTTP face of the runtime: legacy SSE (`GET /sse`, `POST /messages`) and Streamable
 * HTTP (`/mcp`) from one Hono app. Each connection gets its own MCP server and browser.
 * With `authenticate`, every request to those paths needs an agent key, checked anew each
 * time, and a session belongs to the agent whose key opened it.
 *
 * @module
 */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { streamSSE } from "hono/streaming";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/requestBody"
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  readRequestBody,
  requestBodyTooLargeMessage,
} from "@modelcontextprotocol/sdk/server/requestBody.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AgentInfo } from "../store/agent_store.ts";
import { OmotaiError } from "../errors.ts";
import { log } from "../log.ts";
import { type AgentEnv, agentGuard, type Authenticate, sameAgent } from "./agent_guard.ts";
import { hostGuard } from "./host_guard.ts";
import { type CapacityCode, CapacityError, type Place, SessionPlaces } from "./session_places.ts";
import { SseServerTransport } from "./sse_transport.ts";

/** Options of `createHttpApp()`. */
export interface HttpAppOptions {
  /** Host header values the app answers to (see `allowedHostsFor`). */
  allowedHosts: readonly string[];
  /**
   * Builds the MCP server of a new connection, for the agent whose key opened it (undefined
   * without `authenticate`): its identity comes from the key, never from the client's
   * self-declared name.
   */
  newServer: (agent: AgentInfo | undefined) => Server | Promise<Server>;
  /**
   * When set, `/mcp`, `/sse` and `/messages` answer only requests with
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

/** Seconds a client refused for capacity is told to wait (`Retry-After`). */
export const RETRY_AFTER_S = 10;

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

interface StreamEntry {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  agent: AgentInfo | undefined;
  lastSeen: number;
  /** POST answers still streaming. */
  busy: number;
}

/** Builds the MCP HTTP app. */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const app = new Hono<AgentEnv>();
  const sse = new Map<
    string,
    { transport: SseServerTransport; server: Server; agent: AgentInfo | undefined }
  >();
  const streams = new Map<string, StreamEntry>();
  const idleMs = options.idleTimeoutMs ?? 30 * 60_000;
  const max = options.maxSessions;
  const places = new SessionPlaces({
    max,
    *held() {
      for (const map of [sse, streams]) for (const e of map.values()) yield e.agent?.name;
    },
  });
  /**
   * Takes a place for a new session of `agent`, or refuses it for capacity (503 with
   * `Retry-After`, before any browser starts); `release` gives the place back, which a
   * session entering the table does, its place then counted there.
   */
  const admit = async (agent: AgentInfo | undefined): Promise<Place> => {
    const share = agent && options.agentMaxSessions
      ? await options.agentMaxSessions(agent)
      : undefined;
    try {
      return places.take(agent?.name, share);
    } catch (err) {
      if (!(err instanceof CapacityError)) throw err;
      log(`http: session refused: ${err.code}`);
      options.onRefused?.(err.code, agent);
      throw new HTTPException(503, {
        res: new Response(`${err.code}: ${err.message}`, {
          status: 503,
          headers: { "Retry-After": String(RETRY_AFTER_S) },
        }),
      });
    }
  };

  app.onError((err, c) => {
    if (err instanceof HTTPException) return err.res ?? c.text(err.message, err.status);
    // A session the runtime refuses to open (its policy's world, its required isolation):
    // the client is told which code; coded messages never carry page data or secrets.
    if (err instanceof OmotaiError) {
      log(`http: session refused: ${err.code}`);
      return c.text(`${err.code}: ${err.message}`, 503);
    }
    log(`http error: ${err.name}`);
    return c.text("internal error", 500);
  });
  app.use("*", hostGuard(options.allowedHosts));
  if (options.authenticate) {
    const guard = agentGuard(options.authenticate);
    for (const path of ["/mcp", "/sse", "/messages"]) app.use(path, guard);
  }

  app.get("/", (c) =>
    c.text(
      "Omotai MCP runtime\n  Streamable HTTP: /mcp\n  SSE: /sse (messages: /messages)\n",
    ));

  app.get("/sse", async (c) => {
    const agent = c.get("agent");
    const place = await admit(agent);
    return streamSSE(c, async (stream) => {
      const transport = new SseServerTransport(stream, "/messages");
      let server: Server;
      try {
        server = await options.newServer(agent);
      } finally {
        place.release();
      }
      sse.set(transport.sessionId, { transport, server, agent });
      try {
        await server.connect(transport);
        // The stream must stay open until the client leaves.
        await transport.closed;
      } finally {
        sse.delete(transport.sessionId);
        await server.close().catch(() => {});
      }
    });
  });

  app.post("/messages", async (c) => {
    const id = c.req.query("sessionId") ?? "";
    const entry = sse.get(id);
    // Another agent's session is answered as if it did not exist.
    if (!entry || !sameAgent(entry.agent, c.get("agent"))) {
      throw new HTTPException(404, { message: "unknown or closed SSE session" });
    }
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new HTTPException(400, { message: "the body is not JSON" });
    }
    const problem = entry.transport.receive(body);
    if (problem) throw new HTTPException(400, { message: problem });
    return c.text("Accepted", 202);
  });

  app.all("/mcp", async (c) => {
    const id = c.req.header("mcp-session-id");
    if (id) {
      const entry = streams.get(id);
      if (!entry || !sameAgent(entry.agent, c.get("agent"))) {
        return c.json(
          { jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null },
          404,
        );
      }
      entry.lastSeen = Date.now();
      const res = await entry.transport.handleRequest(c.req.raw);
      // A GET stream only waits for notifications, so it does not count as activity: a
      // client that vanished while holding one must still time out.
      return c.req.method === "POST" ? busyWhileStreaming(res, entry) : res;
    }
    if (c.req.method !== "POST") {
      throw new HTTPException(400, { message: "start a session with an initialize POST" });
    }
    const agent = c.get("agent");
    // The whole initialize is read before a place is taken: a client that never finishes
    // sending it holds no place of its agent's share (nor a server) while it stalls.
    const req = await wholeRequest(c.req.raw);
    const place = await admit(agent);
    try {
      const server = await options.newServer(agent);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => {
          streams.set(sid, { transport, server, agent, lastSeen: Date.now(), busy: 0 });
          place.release();
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) streams.delete(transport.sessionId);
      };
      await server.connect(transport);
      const res = await transport.handleRequest(req);
      // Anything but a successful initialize leaves no session behind.
      if (!transport.sessionId || !streams.has(transport.sessionId)) await server.close();
      return res;
    } finally {
      place.release();
    }
  });

  const sweeper = setInterval(() => {
    const now = Date.now();
    for (const [sid, entry] of streams) {
      if (entry.busy > 0 || now - entry.lastSeen < idleMs) continue;
      streams.delete(sid);
      log("closing an idle Streamable HTTP session");
      entry.server.close().catch(() => {});
    }
  }, Math.max(50, Math.min(idleMs / 4, 60_000)));
  Deno.unrefTimer(sweeper);

  return {
    app,
    connectionCount: () => sse.size + streams.size,
    maxSessions: max,
    heldAgents() {
      const held = new Map<string, { name: string; createdAt: string }>();
      for (const map of [sse, streams]) {
        for (const { agent } of map.values()) {
          if (agent) held.set(`${agent.name}\n${agent.createdAt}`, agent);
        }
      }
      return [...held.values()].map(({ name, createdAt }) => ({ name, createdAt }));
    },
    async closeAgent(name, createdAt) {
      const closing: Server[] = [];
      for (const map of [sse, streams]) {
        for (const [sid, entry] of map) {
          if (entry.agent?.name !== name) continue;
          if (createdAt !== undefined && entry.agent.createdAt !== createdAt) continue;
          // Out of the map first: a request racing the close finds no session.
          map.delete(sid);
          closing.push(entry.server);
        }
      }
      await Promise.all(closing.map((s) => s.close().catch(() => {})));
      return closing.length;
    },
    async closeAll() {
      clearInterval(sweeper);
      const all = [...sse.values(), ...streams.values()];
      sse.clear();
      streams.clear();
      await Promise.all(all.map((e) => e.server.close().catch(() => {})));
    },
  };
}

/**
 * `req` with its body read whole (as the SDK's transport reads it, at most its 4 MiB), so that
 * what follows waits on nothing the client sends; one over the bound is answered 413 as the
 * transport would, one whose sender broke off 400.
 */
async function wholeRequest(req: Request): Promise<Request> {
  const body = await readRequestBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE).catch(() => undefined);
  if (!body) throw new HTTPException(400, { message: "the request body could not be read" });
  if (body.tooLarge) {
    const message = requestBodyTooLargeMessage(DEFAULT_MAX_REQUEST_BODY_SIZE);
    throw new HTTPException(413, {
      res: Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, {
        status: 413,
      }),
    });
  }
  return new Request(req, { body: body.text });
}

/** `res` with its body passed through, `entry` counted busy until the body ends. */
function busyWhileStreaming(res: Response, entry: StreamEntry): Response {
  if (!res.body) return res;
  entry.busy++;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    entry.busy--;
    entry.lastSeen = Date.now();
  };
  const reader = res.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await reader.read();
        if (done) {
          finish();
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        finish();
        controller.error(err);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
}
