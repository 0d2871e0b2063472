/**
 * Legacy MCP over SSE as two routes: `GET /sse` opens a session whose stream carries the
 * server's messages (the first event names where to POST), and `POST /messages?sessionId=`
 * feeds it the client's. The session ends with its stream's connection.
 *
 * @module
 */
import type { Handler } from "hono";
import { HTTPException } from "hono/http-exception";
import { streamSSE } from "hono/streaming";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AgentEnv } from "./agent_guard.ts";
import { SseServerTransport } from "./sse_transport.ts";
import type { TransportDeps } from "./transport_deps.ts";

/** Where an SSE session's client POSTs its messages. */
export const SSE_MESSAGES_PATH = "/messages";

/**
 * Handler factory of `GET /sse`: a place taken (or refused) before the stream opens, the
 * server built, the session in the table until its stream ends, then its server closed.
 */
export function sseStream({ sessions, admit, newServer }: TransportDeps): Handler<AgentEnv> {
  return async function sseStream(c) {
    const agent = c.get("agent");
    const place = await admit(agent);
    return streamSSE(c, async (stream) => {
      const transport = new SseServerTransport(stream, SSE_MESSAGES_PATH);
      let server: Server;
      try {
        server = await newServer(agent);
      } finally {
        place.release();
      }
      const id = transport.sessionId;
      sessions.add({ kind: "sse", id, transport, server, agent });
      try {
        await server.connect(transport);
        // The stream must stay open until the client leaves.
        await transport.closed;
      } finally {
        sessions.remove(id);
        await server.close().catch(() => {});
      }
    });
  };
}

/**
 * Handler factory of `POST /messages`: the message delivered to its session (202), an
 * unknown or another agent's session 404, a body that is not JSON-RPC 400.
 */
export function sseMessages({ sessions }: TransportDeps): Handler<AgentEnv> {
  return async function sseMessages(c) {
    const session = sessions.get("sse", c.req.query("sessionId") ?? "", c.get("agent"));
    if (!session) throw new HTTPException(404, { message: "unknown or closed SSE session" });
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      throw new HTTPException(400, { message: "the body is not JSON" });
    }
    const problem = session.transport.receive(body);
    if (problem) throw new HTTPException(400, { message: problem });
    return c.text("Accepted", 202);
  };
}
