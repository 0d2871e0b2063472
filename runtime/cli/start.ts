/**
 * `omotai start`: the MCP server over stdio or HTTP (SSE + Streamable HTTP).
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { findBrowser, ProfileStore } from "../../cdp/mod.ts";
import { AuditLog } from "../audit/audit_log.ts";
import { JsonlMirror } from "../audit/jsonl_mirror.ts";
import { BrowserSession } from "../browser/browser_session.ts";
import { DomainRules } from "../gate/domains.ts";
import { EgressProxy } from "../egress/egress_proxy.ts";
import { egressHooks } from "../egress/egress_hooks.ts";
import { Boundary } from "../gate/boundary.ts";
import { databasePath, openDatabase } from "../store/database.ts";
import { createDemoSite } from "../demo/site.ts";
import { OmotaiError } from "../errors.ts";
import type { Gate } from "../gate/gate.ts";
import { PolicyEngine } from "../policy/engine.ts";
import { loadModules } from "../policy/loader.ts";
import { PolicyGate } from "../gate/policy_gate.ts";
import { log } from "../log.ts";
import { bracketHost } from "../net/host.ts";
import { allowedHostsFor } from "../mcp/host_guard.ts";
import { createHttpApp, type HttpApp } from "../mcp/http_app.ts";
import { createMcpServer } from "../mcp/server.ts";
import { toolSettingsFrom } from "../tools/settings.ts";
import { loadPolicyFile, parsePolicy, type PolicyFile } from "../policy/policy_file.ts";
import { stdinEnded, Teardowns } from "./shutdown.ts";

/** Options of `omotai start`. */
export interface StartOptions {
  mode: "stdio" | "sse";
  policy?: string;
  host: string;
  port: number;
  dataDir: string;
  demoSite?: boolean;
  demoPort?: number;
  headful?: boolean;
  /** Browser executable; defaults to `OMOTAI_BROWSER` or the first candidate found. */
  browser?: string;
  /** JSONL file mirroring every audit row (`--audit`). */
  audit?: string;
  /** sse mode: a Streamable HTTP session idle this long is closed (`--idle-timeout`). */
  idleTimeoutMs?: number;
}

/** A running runtime. */
export interface Runtime extends AsyncDisposable {
  policy: PolicyFile;
  /** The audit log (tests read it). */
  audit: AuditLog;
  /** The dynamic domain rules. */
  domains: DomainRules;
  /** Base URL of the HTTP server (sse mode). */
  url?: string;
  /** Base URL of the demo site, when served. */
  demoUrl?: string;
  http?: HttpApp;
  /** Resolves when a stdio client disconnects (its transport closed or stdin ended). */
  done: Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "[::1]", "localhost"]);

/** Starts the runtime; resolves once it is listening. */
export async function startRuntime(options: StartOptions): Promise<Runtime> {
  if (options.mode === "sse" && !LOOPBACK.has(options.host.toLowerCase())) {
    throw new OmotaiError(
      "HOST_NOT_ALLOWED",
      `--host ${options.host} is not loopback; until agent API keys exist, sse mode binds only to 127.0.0.1, ::1 or localhost`,
    );
  }
  const policy = options.policy ? await loadPolicyFile(options.policy) : parsePolicy("");
  // Every module is verified before anything starts: a refused module stops startup.
  const specs = await loadModules(policy, options.policy);
  const engine = await PolicyEngine.create(specs).catch((err) => {
    throw new OmotaiError("POLICY_ENGINE_FAILED", (err as Error).message);
  });
  const executable = options.browser ?? findBrowser(Deno.env.get("OMOTAI_BROWSER"));
  await Deno.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(databasePath(options.dataDir));
  const mirror = options.audit ? new JsonlMirror(options.audit) : undefined;
  const audit = new AuditLog(db, mirror);
  const domains = new DomainRules(db);
  const boundary = new Boundary({
    engine,
    domains,
    audit,
    allowedOrigins: policy.allowed_origins,
  });
  const proxy = EgressProxy.start();
  const profiles = await ProfileStore.open(options.dataDir);
  audit.append({
    kind: "runtime_started",
    source: "lifecycle",
    decision: "event",
    reason: engine.modules.map((m) => m.name).join(","),
  });
  const gate: Gate = new PolicyGate(boundary);
  const settings = toolSettingsFrom(policy);
  const hooks = egressHooks({ boundary, proxy });
  // Shutdown waits for every session's browser and profile, not just for its server's close.
  const sessions = new Teardowns();
  const newServer = () =>
    createMcpServer({
      session: sessions.track(
        new BrowserSession({
          profiles,
          executable,
          audit,
          headful: options.headful,
          hooks,
        }),
      ),
      gate,
      settings,
    });

  const closers: (() => Promise<void>)[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => resolveDone = r);
  let disposing: Promise<void> | undefined;
  const dispose = async () => {
    // Browsers first: a server or transport that hangs on close must not keep them alive.
    await sessions.disposeAll();
    for (const close of closers.reverse()) await close().catch(logShutdownError);
    // A connection that arrived while the servers closed.
    await sessions.disposeAll();
    // Each step runs even if an earlier one failed: a stuck proxy must not keep the
    // profile directories on disk.
    await proxy[Symbol.asyncDispose]().catch(logShutdownError);
    await engine[Symbol.asyncDispose]().catch(logShutdownError);
    await profiles[Symbol.asyncDispose]().catch(logShutdownError);
    try {
      audit.append({ kind: "runtime_stopped", source: "lifecycle", decision: "event" });
    } catch { /* the database may be gone; nothing else to do */ }
    try {
      mirror?.[Symbol.dispose]();
      db.close();
    } catch (err) {
      logShutdownError(err);
    }
    resolveDone();
  };
  const runtime: Runtime = {
    policy,
    audit,
    domains,
    done,
    // Concurrent callers (a signal during a stdin-close shutdown) all wait for the same run.
    [Symbol.asyncDispose]: () => disposing ??= dispose(),
  };

  if (options.demoSite) {
    const demo = createDemoSite();
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: options.demoPort ?? options.port + 1,
      onListen: () => {},
    }, demo.fetch);
    closers.push(() => server.shutdown());
    runtime.demoUrl = `http://127.0.0.1:${server.addr.port}/`;
  }

  if (options.mode === "stdio") {
    const server = newServer();
    const transport = new StdioServerTransport();
    const previous = transport.onclose;
    transport.onclose = () => {
      previous?.();
      resolveDone();
    };
    await server.connect(transport);
    // The SDK's transport does not report the end of stdin: a client that closes the pipe
    // without killing us has left all the same.
    stdinEnded().then(resolveDone);
    closers.push(() => server.close());
    return runtime;
  }

  let fetchHandler: (req: Request) => Response | Promise<Response> = () =>
    new Response("starting", { status: 503 });
  const server = Deno.serve(
    { hostname: options.host, port: options.port, onListen: () => {} },
    (req) => fetchHandler(req),
  );
  const port = server.addr.port;
  const http = createHttpApp({
    allowedHosts: allowedHostsFor(options.host, port),
    newServer,
    idleTimeoutMs: options.idleTimeoutMs,
  });
  fetchHandler = (req) => http.app.fetch(req);
  closers.push(() => server.shutdown(), () => http.closeAll());
  runtime.url = `http://${bracketHost(options.host)}:${port}`;
  runtime.http = http;
  return runtime;
}

/** The text `omotai start --mode sse` prints once it listens. */
export function banner(runtime: Runtime, version: string): string {
  const lines = [
    `Omotai ${version} is running.`,
    `  Streamable HTTP: ${runtime.url}/mcp`,
    `  SSE:             ${runtime.url}/sse`,
  ];
  if (runtime.demoUrl) lines.push(`  Demo site:       ${runtime.demoUrl}`);
  lines.push(
    "",
    "Client configuration (Claude Code, Cursor, VS Code and other MCP clients):",
    JSON.stringify(
      { mcpServers: { omotai: { type: "http", url: `${runtime.url}/mcp` } } },
      null,
      2,
    ),
    "",
    "Or with Claude Code: claude mcp add --transport http omotai " + `${runtime.url}/mcp`,
  );
  if (runtime.demoUrl) {
    lines.push(`Then ask your agent: "Open ${runtime.demoUrl} and find the cheapest product."`);
  }
  lines.push("Press Ctrl+C to stop.");
  return lines.join("\n");
}

/** Logs and swallows errors of a shutdown path. */
export function logShutdownError(err: unknown): void {
  log(`shutdown: ${(err as Error).name}`);
}
