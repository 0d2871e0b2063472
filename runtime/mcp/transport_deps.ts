/**
 * What every MCP transport route is built from: one bag, made once by `createHttpApp()`,
 * holding the session table, the admission of new sessions and the server factory.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { AgentInfo } from "../store/mod.ts";
import type { McpSessionTable } from "./mcp_session_table.ts";
import {
  type CapacityCode,
  CapacityError,
  type Place,
  type SessionPlaces,
} from "./session_places.ts";

/**
 * Builds the MCP server of a new session, for the agent whose key opened it (undefined
 * without agent keys): its identity comes from the key, never from the client's
 * self-declared name.
 */
export type NewServer = (agent: AgentInfo | undefined) => Server | Promise<Server>;

/**
 * Takes a place for a new session of `agent`, or throws `CapacityError` (before any browser
 * starts). `release` gives the place back, which a session entering the table does, its
 * place then counted there.
 */
export type Admit = (agent: AgentInfo | undefined) => Promise<Place>;

/** The transport routes' one bag. */
export interface TransportDeps {
  sessions: McpSessionTable;
  admit: Admit;
  newServer: NewServer;
}

/** Options of `sessionAdmission()`. */
export interface SessionAdmissionOptions {
  places: SessionPlaces;
  /** An agent's own share of sessions (undefined: none of its own); a rejection refuses. */
  agentMaxSessions?: (agent: AgentInfo) => Promise<number | undefined>;
  /** Told of each session refused for capacity (to audit it); must not throw. */
  onRefused?: (code: CapacityCode, agent: AgentInfo | undefined) => void;
}

/**
 * The `Admit` of a runtime: its agent's share read, then a place taken or refused (told to
 * `onRefused`; logged and answered where errors become responses, `http_errors.ts`).
 */
export function sessionAdmission(options: SessionAdmissionOptions): Admit {
  return async function admit(agent) {
    const share = agent && options.agentMaxSessions
      ? await options.agentMaxSessions(agent)
      : undefined;
    try {
      return options.places.take(agent?.name, share);
    } catch (err) {
      if (err instanceof CapacityError) options.onRefused?.(err.code, agent);
      throw err;
    }
  };
}
