/**
 * `omotai start`: the MCP server over stdio or HTTP (SSE + Streamable HTTP).
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { findBrowser, ProfileStore } from "../../cdp/mod.ts";
import { type AgentInfo, AgentKeys } from "../agents/agent_keys.ts";
import { AuditLog } from "../audit/audit_log.ts";
import { JsonlMirror } from "../audit/jsonl_mirror.ts";
import { BrowserSession } from "../browser/browser_session.ts";
import { DomainRules } from "../gate/domains.ts";
import { EgressProxy } from "../egress/egress_proxy.ts";
import { TlsAuthority } from "../egress/tls_authority.ts";
import { databasePath, openDatabase } from "../store/database.ts";
import { createDemoSite } from "../demo/site.ts";
import { type Approver, unavailableApprover } from "../gate/approver.ts";
import { log } from "../log.ts";
import type { OmotaiError } from "../errors.ts";
import { bracketHost } from "../net/host.ts";
import { allowedHostsFor } from "../mcp/host_guard.ts";
import { createHttpApp, type HttpApp } from "../mcp/http_app.ts";
import { createMcpServer } from "../mcp/server.ts";
import type { DatabaseSync } from "node:sqlite";
import { keySourceFrom, Vault } from "../../vault/mod.ts";
import { GrantStore } from "../grants/mod.ts";
import { egressSecrets, processRedactor } from "../redact/mod.ts";
import { grantLoginService } from "./login_service.ts";
import { consolePushChannel } from "./push_channel.ts";
import { startupLogin } from "./startup_login.ts";
import type { PolicyFile } from "../policy/policy_file.ts";
import type { HumanChannel } from "../tools/tool.ts";
import { adminToken } from "./admin_token.ts";
import { ApprovalQueue, HumanQuestions } from "../approvals/mod.ts";
import { isConsolePath } from "../../ui/console_app.ts";
import { watchRemovedAgents } from "./agent_watch.ts";
import { operatorConsole } from "./operator_console.ts";
import { PolicyWorlds } from "./policy_worlds.ts";
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
  /** stdio mode: serve the operator console alone on `consolePort` (`--console`). */
  console?: boolean;
  consolePort?: number;
  /**
   * The vault key; defaults to `OMOTAI_VAULT_KEY` / `OMOTAI_VAULT_PASSPHRASE` (in-process
   * tests pass it here, since the environment is shared by every test of the process).
   */
  vaultKey?: { key?: string; passphrase?: string };
  /**
   * Extra roots the proxy trusts for upstream TLS (tests' own CA); the system roots and
   * `DENO_CERT` always apply.
   */
  upstreamCa?: string[];
}

/** A running runtime. */
export interface Runtime extends AsyncDisposable {
  policy: PolicyFile;
  /** The audit log (tests read it). */
  audit: AuditLog;
  /** The dynamic domain rules. */
  domains: DomainRules;
  /** Agent keys (sse mode needs one per client). */
  agents: AgentKeys;
  /** The admin token of the console and `/api` (from `OMOTAI_ADMIN_TOKEN` or generated). */
  adminToken: string;
  /** Whether the admin token was generated here (then it is printed once). */
  adminTokenGenerated: boolean;
  /** Base URL of the HTTP server (sse mode). */
  url?: string;
  /** URL of the operator console, when served. */
  consoleUrl?: string;
  /** Base URL of the demo site, when served. */
  demoUrl?: string;
  http?: HttpApp;
  /** Resolves when a stdio client disconnects (its transport closed or stdin ended). */
  done: Promise<void>;
}

/** Starts the runtime; resolves once it is listening. */
export async function startRuntime(options: StartOptions): Promise<Runtime> {
  // sse mode needs an agent key on every MCP request, so it may bind beyond loopback.
  const admin = adminToken(Deno.env.get("OMOTAI_ADMIN_TOKEN"));
  const executable = options.browser ?? findBrowser(Deno.env.get("OMOTAI_BROWSER"));
  await Deno.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(databasePath(options.dataDir));
  // The vault opens here or not at all: a wrong key stops the start (VAULT_KEY_MISMATCH)
  // before anything else runs, never at the first login, and every value is known to the
  // redactor before any page can echo it.
  const vault = await openVault(db, options.vaultKey).catch((err) => {
    db.close();
    throw err;
  });
  const mirror = options.audit ? new JsonlMirror(options.audit) : undefined;
  const audit = new AuditLog(db, mirror);
  const domains = new DomainRules(db);
  const agents = new AgentKeys(db);
  // A fresh authority per start, in the data dir (0600): the proxy terminates TLS with it.
  const authority = await TlsAuthority.create(`${options.dataDir}/proxy-ca`);
  const proxy = EgressProxy.start({ authority, upstreamCa: options.upstreamCa });
  const approvals = new ApprovalQueue(audit);
  const questions = new HumanQuestions(audit);
  // In stdio mode without --console no human is reachable: confirmations are refused at once.
  const withConsole = options.mode === "sse" || options.console === true;
  const approver: Approver = withConsole ? approvals : unavailableApprover;
  const human: HumanChannel | undefined = withConsole ? questions : undefined;
  const worlds = new PolicyWorlds({ domains, audit, proxy, approver });
  const grants = new GrantStore(db, { audit });
  // The runtime's own policy is verified before anything starts: a refused module stops it.
  const runtimeWorld = await worlds.get(options.policy).catch(async (err) => {
    await proxy[Symbol.asyncDispose]();
    db.close();
    throw err;
  });
  const policy = runtimeWorld.policy;
  const profiles = await ProfileStore.open(options.dataDir);
  audit.append({
    kind: "runtime_started",
    source: "lifecycle",
    decision: "event",
    reason: runtimeWorld.engine.modules.map((m) => m.name).join(","),
  });
  // Shutdown waits for every session's browser and profile, not just for its server's close.
  const sessions = new Teardowns();
  /** Live sessions by id, for the console. */
  const live = new Map<string, BrowserSession>();
  /** A connection's server: its agent's policy (or the runtime's), its identity from its key. */
  const newServer = async (agent: AgentInfo | undefined) => {
    const world = agent?.policy
      ? await worlds.get(agent.policy).catch((err) => {
        // The client sees only that its connection failed; the operator is told why.
        log(
          `agent ${agent.name}: ${(err as OmotaiError).code ?? "ERROR"}: ${(err as Error).message}`,
        );
        throw err;
      })
      : runtimeWorld;
    const session = new BrowserSession({
      profiles,
      executable,
      audit,
      headful: options.headful,
      hooks: world.hooks,
    });
    session.agent = agent?.name ?? (options.mode === "stdio" ? "stdio" : null);
    live.set(session.id, session);
    const dispose = session[Symbol.asyncDispose].bind(session);
    session[Symbol.asyncDispose] = () => dispose().finally(() => live.delete(session.id));
    return createMcpServer({
      session: sessions.track(session),
      gate: world.gate,
      settings: world.settings,
      human,
      login: {
        ...grantLoginService({
          grants,
          vault,
          redactor: processRedactor(),
          taintAfterLogin: world.policy.taint_after_login,
          boundary: world.boundary,
          loginOrigins: world.loginOrigins,
        }),
        push: human ? (s) => consolePushChannel(human, s) : undefined,
        startup: world.policy.login
          ? startupLogin(world.policy.login, {
            vault,
            redactor: processRedactor(),
            boundary: world.boundary,
            loginOrigins: world.loginOrigins,
            push: human ? (s) => consolePushChannel(human, s) : undefined,
          })
          : undefined,
      },
    });
  };

  /** The operator console over this runtime's stores. */
  const consoleApp = (allowedHosts: readonly string[], http?: HttpApp) =>
    operatorConsole({
      adminToken: admin.token,
      allowedHosts,
      approvals,
      questions,
      live,
      agents,
      domains,
      db,
      audit,
      worlds,
      closeAgent: (name) => http?.closeAgent(name) ?? Promise.resolve(0),
    });
  const closers: (() => Promise<void>)[] = [
    () => Promise.resolve(approvals.close()),
    () => Promise.resolve(questions.close()),
  ];
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
    await worlds[Symbol.asyncDispose]().catch(logShutdownError);
    await profiles[Symbol.asyncDispose]().catch(logShutdownError);
    // The authority's key is of no use after this start: it does not outlive it on disk.
    await Deno.remove(`${options.dataDir}/proxy-ca`, { recursive: true }).catch(() => {});
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
    agents,
    adminToken: admin.token,
    adminTokenGenerated: admin.generated,
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
    const server = await newServer(undefined);
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
    if (options.console) {
      let handle: Deno.ServeHandler<Deno.NetAddr> = () => new Response("starting", { status: 503 });
      const consoleServer = Deno.serve(
        { hostname: options.host, port: options.consolePort ?? 8090, onListen: () => {} },
        (req, info) => handle(req, info),
      );
      const bound = consoleServer.addr.port;
      const operator = consoleApp(allowedHostsFor(options.host, bound));
      handle = (req, info) => operator.fetch(req, info);
      await worlds.reserve(runtimeOrigins(options.host, bound));
      closers.push(() => consoleServer.shutdown());
      runtime.consoleUrl = `http://${bracketHost(options.host)}:${bound}/`;
    }
    return runtime;
  }

  let fetchHandler: (
    req: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
  ) => Response | Promise<Response> = () => new Response("starting", { status: 503 });
  const server = Deno.serve(
    { hostname: options.host, port: options.port, onListen: () => {} },
    (req, info) => fetchHandler(req, info),
  );
  const port = server.addr.port;
  const http = createHttpApp({
    allowedHosts: allowedHostsFor(options.host, port),
    newServer,
    authenticate: (key) => agents.verify(key),
    idleTimeoutMs: options.idleTimeoutMs,
  });
  await worlds.reserve(runtimeOrigins(options.host, port));
  const watch = watchRemovedAgents(agents, (name, at) => http.closeAgent(name, at));
  closers.push(() => Promise.resolve(clearInterval(watch)));
  const operator = consoleApp(allowedHostsFor(options.host, port), http);
  // One port: MCP keeps /mcp, /sse and /messages; the console owns its own paths.
  fetchHandler = (req, info) =>
    isConsolePath(new URL(req.url).pathname) ? operator.fetch(req, info) : http.app.fetch(req);
  runtime.consoleUrl = `http://${bracketHost(options.host)}:${port}/`;
  closers.push(() => server.shutdown(), () => http.closeAll());
  runtime.url = `http://${bracketHost(options.host)}:${port}`;
  runtime.http = http;
  return runtime;
}

/** The origins the runtime answers on: the controlled browser may never reach them. */
export function runtimeOrigins(host: string, port: number): string[] {
  const names = new Set(["127.0.0.1", "localhost", "[::1]", bracketHost(host.toLowerCase())]);
  return [...names].flatMap((n) => [`http://${n}:${port}`, `https://${n}:${port}`]);
}

/** Logs and swallows errors of a shutdown path. */
export function logShutdownError(err: unknown): void {
  log(`shutdown: ${(err as Error).name}`);
}

/**
 * The vault, when `OMOTAI_VAULT_KEY` or `OMOTAI_VAULT_PASSPHRASE` is set; its values go into
 * the process redactor at once.
 */
async function openVault(
  db: DatabaseSync,
  given?: { key?: string; passphrase?: string },
): Promise<Vault | undefined> {
  const key = given ? given.key : Deno.env.get("OMOTAI_VAULT_KEY");
  const passphrase = given ? given.passphrase : Deno.env.get("OMOTAI_VAULT_PASSPHRASE");
  if (!key && !passphrase) return undefined;
  const vault = await Vault.open(
    db,
    keySourceFrom({ key, passphrase }, {
      key: "OMOTAI_VAULT_KEY",
      passphrase: "OMOTAI_VAULT_PASSPHRASE",
    }),
  );
  for (const s of vault.list()) {
    const value = await vault.reveal(s.id);
    // A username is blanked whole, not by its pieces (an e-mail's domain is ordinary text),
    // and may be in a signed-in site's own URLs; every other value leaves only in a login.
    processRedactor().add([value], { wholeOnly: s.kind === "username" });
    if (s.kind !== "username") egressSecrets().add([value]);
  }
  return vault;
}
