/**
 * The MCP sessions a runtime holds over HTTP, both transports in one table keyed by session
 * id. The rule kept here: a session is found only by the agent whose key opened it; another
 * agent's id is answered as if it did not exist. A session leaves the table before its
 * server closes, so a request racing the close finds no session.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp"
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AgentInfo } from "../store/mod.ts";
import { sameAgent } from "./agent_guard.ts";
import type { Activity } from "./idle_sweeper.ts";
import type { SseServerTransport } from "./sse_transport.ts";

/** An open MCP session over HTTP, by the transport that carries it. */
export type McpSession =
  /** Legacy SSE: a stream (`GET /sse`) fed by POSTs (`/messages`); ends with its stream. */
  | {
    kind: "sse";
    id: string;
    transport: SseServerTransport;
    server: Server;
    agent: AgentInfo | undefined;
  }
  /** Streamable HTTP (`/mcp`): requests carrying its id; ends when idle too long. */
  | {
    kind: "streamable";
    id: string;
    transport: WebStandardStreamableHTTPServerTransport;
    server: Server;
    agent: AgentInfo | undefined;
    activity: Activity;
  };

/** A kind of session (its transport). */
export type McpSessionKind = McpSession["kind"];

/** The open MCP sessions. */
export class McpSessionTable {
  readonly #sessions = new Map<string, McpSession>();

  /** Enters a session (its id is fresh: a UUID its transport made). */
  add(session: McpSession): void {
    this.#sessions.set(session.id, session);
  }

  /** The session `id` of `kind` if `agent` opened it; another agent's is none. */
  get<K extends McpSessionKind>(
    kind: K,
    id: string,
    agent: AgentInfo | undefined,
  ): Extract<McpSession, { kind: K }> | undefined {
    const session = this.#sessions.get(id);
    if (session?.kind !== kind || !sameAgent(session.agent, agent)) return undefined;
    return session as Extract<McpSession, { kind: K }>;
  }

  /** Takes session `id` out of the table (its server is the caller's to close). */
  remove(id: string): boolean {
    return this.#sessions.delete(id);
  }

  /** Number of sessions held (both transports). */
  count(): number {
    return this.#sessions.size;
  }

  /** The sessions of `kind`. */
  *of<K extends McpSessionKind>(kind: K): Iterable<Extract<McpSession, { kind: K }>> {
    for (const s of this.#sessions.values()) {
      if (s.kind === kind) yield s as Extract<McpSession, { kind: K }>;
    }
  }

  /**
   * The agent (name; undefined without an agent key) of every session held, one per
   * session: what `SessionPlaces` counts the runtime's cap and each agent's share on.
   */
  *agents(): Iterable<string | undefined> {
    for (const s of this.#sessions.values()) yield s.agent?.name;
  }

  /** The agents (name and key's creation) holding a session, each once. */
  heldAgents(): { name: string; createdAt: string }[] {
    const held = new Map<string, { name: string; createdAt: string }>();
    for (const { agent } of this.#sessions.values()) {
      if (agent) held.set(`${agent.name}\n${agent.createdAt}`, agent);
    }
    return [...held.values()].map(({ name, createdAt }) => ({ name, createdAt }));
  }

  /**
   * Ends the sessions `which` picks: out of the table first, then their servers closed
   * (their browsers with them; a close that fails is that session's, never the others');
   * returns how many.
   */
  async end(which: (session: McpSession) => boolean): Promise<number> {
    const ending: McpSession[] = [];
    for (const s of this.#sessions.values()) if (which(s)) ending.push(s);
    for (const s of ending) this.#sessions.delete(s.id);
    await Promise.all(ending.map((s) => s.server.close().catch(() => {})));
    return ending.length;
  }
}
