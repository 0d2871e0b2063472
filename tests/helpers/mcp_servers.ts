/**
 * Small real MCP servers for the HTTP app's tests: one tool (`echo`), counted as they are
 * built and closed, each remembering the agent it was built for.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { AgentInfo } from "../../runtime/store/agent_store.ts";

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
