/**
 * MCP Streamable HTTP as one route (`/mcp`, every method): a request carrying
 * `Mcp-Session-Id` goes to its session's transport; an initialize POST without one opens a
 * session. Anything but a successful initialize leaves no session behind.
 *
 * @module
 */
import type { Handler } from "hono";
import { HTTPException } from "hono/http-exception";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/requestBody"
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  readRequestBody,
  requestBodyTooLargeMessage,
} from "@modelcontextprotocol/sdk/server/requestBody.js";
import type { AgentEnv } from "./agent_guard.ts";
import { jsonRpcError } from "./http_errors.ts";
import { Activity } from "./idle_sweeper.ts";
import type { TransportDeps } from "./transport_deps.ts";

/**
 * Handler factory of `/mcp`. An unknown session id, or another agent's, is answered 404
 * (JSON-RPC `Session not found`, as the SDK words it); a request without one must be an
 * initialize POST (else 400).
 */
export function streamableHttp({ sessions, admit, newServer }: TransportDeps): Handler<AgentEnv> {
  return async function streamableHttp(c) {
    const agent = c.get("agent");
    const id = c.req.header("mcp-session-id");
    if (id) {
      const session = sessions.get("streamable", id, agent);
      if (!session) throw jsonRpcError(404, -32001, "Session not found");
      session.activity.touch();
      const res = await session.transport.handleRequest(c.req.raw);
      // A GET stream only waits for notifications, so it does not count as activity: a
      // client that vanished while holding one must still time out.
      return c.req.method === "POST" ? session.activity.streaming(res) : res;
    }
    if (c.req.method !== "POST") {
      throw new HTTPException(400, { message: "start a session with an initialize POST" });
    }
    // The whole initialize is read before a place is taken: a client that never finishes
    // sending it holds no place of its agent's share (nor a server) while it stalls.
    const req = await wholeRequest(c.req.raw);
    const place = await admit(agent);
    try {
      const server = await newServer(agent);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.add({
            kind: "streamable",
            id: sid,
            transport,
            server,
            agent,
            activity: new Activity(),
          });
          place.release();
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.remove(transport.sessionId);
      };
      await server.connect(transport);
      const res = await transport.handleRequest(req);
      // Anything but a successful initialize leaves no session behind.
      const sid = transport.sessionId;
      if (!sid || !sessions.get("streamable", sid, agent)) await server.close();
      return res;
    } finally {
      place.release();
    }
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
    throw jsonRpcError(413, -32000, requestBodyTooLargeMessage(DEFAULT_MAX_REQUEST_BODY_SIZE));
  }
  return new Request(req, { body: body.text });
}
