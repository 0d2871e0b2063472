/**
 * Small real MCP servers for the HTTP app's tests: one tool (`echo`), counted as they are
 * built and closed, each remembering the agent it was built for; the route tests' agents,
 * their bare app, an `initialize` request and an SSE event reader.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Hono } from "hono";
import type { AgentInfo } from "../../runtime/store/mod.ts";
import type { AgentEnv } from "../../runtime/mcp/agent_guard.ts";
import { httpErrorHandler } from "../../runtime/mcp/http_errors.ts";
import { McpSessionTable } from "../../runtime/mcp/mcp_session_table.ts";

/** Builds MCP servers (`newServer`) and counts them. */
export class Servers {
  built = 0;
  closed = 0;
  /** The agent each server was built for, in order. */
  agents: (AgentInfo | undefined)[] = [];

  newServer = (agent?: AgentInfo): Server => {
    this.agents.push(agent);
    const server = new Server(
      { name: "test-server", version: "0.0.1" },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: "echo", inputSchema: { type: "object" as const } }],
    }));
    server.onclose = () => {
      this.closed++;
    };
    this.built++;
    return server;
  };
}

/** Two agents of the route tests; a request names its agent in `x-agent`. */
export const TEST_AGENTS: Readonly<Record<string, AgentInfo>> = {
  alice: { name: "alice", createdAt: "2026-01-01T00:00:00Z" },
  bob: { name: "bob", createdAt: "2026-01-01T00:00:00Z" },
};

/** An MCP `initialize` request. */
export interface InitializeRequest {
  jsonrpc: "2.0";
  id: number;
  method: "initialize";
  params: {
    protocolVersion: string;
    capabilities: Record<string, never>;
    clientInfo: { name: string; version: string };
  };
}

/** An MCP `initialize` request at `protocolVersion`, from a client named `client`. */
export function initializeRequest(protocolVersion: string, client: string): InitializeRequest {
  return {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion, capabilities: {}, clientInfo: { name: client, version: "0" } },
  };
}

/**
 * A bare app for one transport's routes: errors answered by the one handler, the agent the
 * one `x-agent` names (the agent guard's job in the real app), a session table, and servers.
 */
export function agentRouteApp(): {
  app: Hono<AgentEnv>;
  servers: Servers;
  sessions: McpSessionTable;
} {
  const app = new Hono<AgentEnv>();
  app.onError(httpErrorHandler);
  app.use("*", async (c, next) => {
    c.set("agent", TEST_AGENTS[c.req.header("x-agent") ?? ""]);
    await next();
  });
  return { app, servers: new Servers(), sessions: new McpSessionTable() };
}

/** An SSE body read one event at a time. */
export interface SseEvents {
  /** The next event's `event:` and `data:`; rejects when the stream has ended. */
  next(): Promise<{ event: string; data: string }>;
  close(): Promise<void>;
}

/** Reads an SSE body one event at a time (`event:` and `data:` of each block). */
export function sseEvents(body: ReadableStream<Uint8Array>): SseEvents {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const next = async (): Promise<{ event: string; data: string }> => {
    while (!buffer.includes("\n\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the SSE stream ended");
      buffer += value;
    }
    const end = buffer.indexOf("\n\n");
    const block = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    const field = (name: string) =>
      block.split("\n").find((l) => l.startsWith(`${name}:`))?.slice(name.length + 1).trim() ??
        "";
    return { event: field("event"), data: field("data") };
  };
  return { next, close: () => reader.cancel() };
}
