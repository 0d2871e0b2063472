/**
 * How `omotai start` serves: the demo site, MCP over stdio (with the console on its own port
 * under `--console`), or one HTTP port for MCP (SSE + Streamable HTTP) and the console. Each
 * server is registered on the start's teardown the moment it listens.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { AgentInfo, AgentStore, AuditSink } from "../store/mod.ts";
import { createDemoSite } from "../demo/mod.ts";
import { errorCode, log } from "../mod.ts";
import { allowedHostsFor, createHttpApp, type HttpApp } from "../mcp/mod.ts";
import { bracketHost } from "../net/mod.ts";
import { isConsolePath } from "../../ui/mod.ts";
import { watchRemovedAgents } from "./agent_watch.ts";
import type { McpServer } from "./connections.ts";
import type { operatorConsole } from "./operator_console.ts";
import type { PolicyFile } from "../policy/mod.ts";
import type { PolicyWorlds } from "./policy_worlds.ts";
import { agentShare } from "./session_cap.ts";
import { stdinEnded } from "./shutdown.ts";
import type { Teardown } from "./teardown.ts";

/** The console over the runtime's stores, for the hosts it answers on. */
export type ConsoleFactory = (
  allowedHosts: readonly string[],
  http?: HttpApp,
) => ReturnType<typeof operatorConsole>;

/** What serving needs. */
export interface ServeDeps {
  teardown: Teardown;
  newServer: (agent: AgentInfo | undefined) => Promise<McpServer>;
  consoleApp: ConsoleFactory;
  worlds: PolicyWorlds;
}

/** The demo shop on loopback; returns its base URL. */
export function serveDemo(teardown: Teardown, port: number): string {
  const demo = createDemoSite();
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, demo.fetch);
  teardown.defer("demo site", () => server.shutdown());
  return `http://127.0.0.1:${server.addr.port}/`;
}

/**
 * MCP over stdio; `clientLeft` is called when the transport closes or stdin ends. With
 * `console`, the operator console alone on `consolePort`; returns its URL.
 */
export async function serveStdio(
  d: ServeDeps,
  options: { host: string; console?: boolean; consolePort?: number },
  clientLeft: () => void,
): Promise<{ consoleUrl?: string }> {
  const server = await d.newServer(undefined);
  const transport = new StdioServerTransport();
  const previous = transport.onclose;
  transport.onclose = () => {
    previous?.();
    clientLeft();
  };
  await server.connect(transport);
  d.teardown.defer("stdio server", () => server.close());
  // The SDK's transport does not report the end of stdin: a client that closes the pipe
  // without killing us has left all the same.
  stdinEnded().then(clientLeft);
  if (!options.console) return {};
  let handle: Deno.ServeHandler<Deno.NetAddr> = () => new Response("starting", { status: 503 });
  const consoleServer = Deno.serve(
    { hostname: options.host, port: options.consolePort ?? 8090, onListen: () => {} },
    (req, info) => handle(req, info),
  );
  d.teardown.defer("console server", () => consoleServer.shutdown());
  const bound = consoleServer.addr.port;
  const operator = d.consoleApp(allowedHostsFor(options.host, bound));
  handle = (req, info) => operator.fetch(req, info);
  await d.worlds.reserve(runtimeOrigins(options.host, bound));
  return { consoleUrl: `http://${bracketHost(options.host)}:${bound}/` };
}

/** What serving HTTP needs besides `ServeDeps`. */
export interface HttpServeDeps extends ServeDeps {
  agents: AgentStore;
  /** The policy an agent's sessions run under (its own, or the runtime's): its `max_sessions`. */
  policyOf: (agent: AgentInfo) => Promise<Pick<PolicyFile, "max_sessions">>;
  /** Where a session refused for capacity is audited. */
  audit: AuditSink;
}

/** MCP (SSE + Streamable HTTP) and the console on one port. */
export async function serveHttp(
  d: HttpServeDeps,
  options: {
    host: string;
    port: number;
    idleTimeoutMs?: number;
    maxSessions?: number;
    publicHosts?: readonly string[];
  },
): Promise<{ url: string; consoleUrl: string; http: HttpApp }> {
  let fetchHandler: (
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ) => Response | Promise<Response> = () => new Response("starting", { status: 503 });
  const server = Deno.serve(
    { hostname: options.host, port: options.port, onListen: () => {} },
    (req, info) => fetchHandler(req, info),
  );
  d.teardown.defer("http server", () => server.shutdown());
  const port = server.addr.port;
  // Behind a load balancer, clients name the balancer's host (`--public-host`), not this one.
  const allowedHosts = [...allowedHostsFor(options.host, port), ...options.publicHosts ?? []];
  const http = createHttpApp({
    allowedHosts,
    newServer: d.newServer,
    // A key of another tenant (one database, several tenants) opens nothing here.
    authenticate: async (key) => {
      const agent = await d.agents.verify(key);
      if (!agent || agent.tenant !== d.agents.tenant) return undefined;
      const { tenant: _, ...info } = agent;
      return info;
    },
    idleTimeoutMs: options.idleTimeoutMs,
    maxSessions: options.maxSessions,
    agentMaxSessions: async (agent) =>
      agentShare((await d.policyOf(agent)).max_sessions, options.maxSessions),
    onRefused: (code, agent) => {
      try {
        d.audit.append({
          kind: "session_refused",
          source: "lifecycle",
          decision: "deny",
          reason: code,
          agent: agent?.name ?? null,
        });
      } catch (err) {
        // Refused all the same; the log says the row is missing.
        log(`http: session_refused not audited: ${errorCode(err) ?? (err as Error).name}`);
      }
    },
  });
  d.teardown.defer("http sessions", () => http.closeAll());
  await d.worlds.reserve([
    ...runtimeOrigins(options.host, port),
    // The balancer's name reaches this console too: no controlled browser may go there.
    ...(options.publicHosts ?? []).flatMap((h) => [`http://${h}`, `https://${h}`]),
  ]);
  const unwatch = watchRemovedAgents(
    () => d.agents.list(),
    () => http.heldAgents(),
    (name, at) => http.closeAgent(name, at),
  );
  d.teardown.defer("agent watch", unwatch);
  const operator = d.consoleApp(allowedHosts, http);
  // One port: MCP keeps /mcp, /sse and /messages; the console owns its own paths.
  fetchHandler = (req, info) =>
    isConsolePath(new URL(req.url).pathname) ? operator.fetch(req, info) : http.app.fetch(req);
  const base = `http://${bracketHost(options.host)}:${port}`;
  return { url: base, consoleUrl: `${base}/`, http };
}

/** The origins the runtime answers on: the controlled browser may never reach them. */
export function runtimeOrigins(host: string, port: number): string[] {
  const names = new Set(["127.0.0.1", "localhost", "[::1]", bracketHost(host.toLowerCase())]);
  return [...names].flatMap((n) => [`http://${n}:${port}`, `https://${n}:${port}`]);
}
