/**
 * `omotai start`: the MCP server over stdio or HTTP (SSE + Streamable HTTP).
 *
 * @module
 */
import { findBrowser, ProfileStore } from "../../cdp/mod.ts";
import {
  type AgentStore,
  type AuditStore,
  type AuditWriter,
  type DomainStore,
  MemoryDecisionStore,
} from "../store/mod.ts";
import { defaultAgentShare, machineMaxSessions } from "./session_cap.ts";
import type {
  BrowserSession,
  CallWatchBounds,
  LaunchGroups,
  LaunchIsolation,
} from "../browser/mod.ts";
import { EgressProxy, TlsAuthority } from "../egress/mod.ts";
import { type Approver, unavailableApprover } from "../gate/mod.ts";
import { errorCode, log } from "../mod.ts";
import type { HttpApp } from "../mcp/mod.ts";
import type { PolicyFile } from "../policy/mod.ts";
import { BrowserPin, type PinSource } from "../launcher/mod.ts";
import type { HumanChannel } from "../tools/mod.ts";
import type { IsolationFact } from "../isolation/mod.ts";
import { adminToken } from "./admin_token.ts";
import { ApprovalBoard, QuestionBoard } from "../approvals/mod.ts";
import { type IsolationOptions, openIsolation, requireIsolation } from "./browser_isolation.ts";
import { browserStart, openWarmPool } from "./browser_start.ts";
import { agentWorld, connectionFactory } from "./connections.ts";
import { mirrorLiveSessions } from "./live_mirror.ts";
import { openStores, type Stores } from "./open_stores.ts";
import { byteRates } from "./byte_rates.ts";
import { operatorConsole } from "./operator_console.ts";
import { type PolicyWorld, PolicyWorlds } from "./policy_worlds.ts";
import { type ConsoleFactory, runtimeOrigins, serveDemo, serveHttp, serveStdio } from "./serve.ts";
import { Disposals } from "./shutdown.ts";
import { Teardown } from "./teardown.ts";

export { openStores, type Stores };

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
  /**
   * The browser's SHA-256 and where it was given (`--browser-sha256`, `OMOTAI_BROWSER_SHA256`):
   * any other build is refused (`BROWSER_PIN_MISMATCH`), as with the policy's `browser_sha256`.
   */
  browserSha256?: PinSource;
  /** JSONL file mirroring every audit row (`--audit`). */
  audit?: string;
  /**
   * A PostgreSQL URL (`--database`, `OMOTAI_DATABASE_URL`): the audit, agents, domain rules,
   * approvals and live sessions are then the tenant's, shared by every runtime of it.
   */
  database?: string;
  /** The tenant this runtime serves (`--tenant`; default `default`). */
  tenant?: string;
  /**
   * sse mode: further `host:port` names clients reach this runtime by (`--public-host`, a
   * load balancer's); its Host check answers to them too.
   */
  publicHosts?: string[];
  /** sse mode: a Streamable HTTP session idle this long is closed (`--idle-timeout`). */
  idleTimeoutMs?: number;
  /** sse mode: sessions held at once (`--max-sessions`); default by the machine's memory. */
  maxSessions?: number;
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
  /**
   * Tests: called with each teardown step's name as the resource it undoes is registered;
   * throwing fails the start right there (then everything made so far is undone).
   */
  onStep?: (name: string) => void;
  /** Tests: told the id of each child process the start spawns (the egress proxy). */
  onChild?: (pid: number) => void;
  /** Each browser in its own network namespace (default: when this machine has them). */
  isolation?: IsolationOptions;
  /**
   * Browsers kept started ahead of their sessions (`--warm-browsers`); default by the
   * machine's cores (`defaultPoolSize`), 0 for none.
   */
  warmBrowsers?: number;
  /**
   * The window of the dialog rate rule (default `LOOP_WINDOW_MS`, 30 s): a test of the chain
   * rule narrows it so its agent may answer faster (no flag sets it).
   */
  dialogLoopWindowMs?: number;
  /**
   * The call watch's bounds (default: `PROBE_TIMEOUT_MS`, `SPIN_CPU_S`...): a test of the
   * recovery after a spinning page narrows them so its loop is caught after a fraction of the
   * CPU (no flag sets them).
   */
  callWatch?: CallWatchBounds;
  /**
   * How long a shared store's admin token hash may go unread before every bearer is refused
   * (default `ADMIN_STALE_MS`, 30 s): a test of an outage narrows it (no flag sets it).
   */
  adminStaleMs?: number;
}

/** A running runtime. */
export interface Runtime extends AsyncDisposable {
  policy: PolicyFile;
  /** The audit chain (tests read it). */
  audit: AuditStore;
  /** The dynamic domain rules. */
  domains: DomainStore;
  /** Agent keys (sse mode needs one per client). */
  agents: AgentStore;
  /**
   * The admin token of the console and `/api` (from `OMOTAI_ADMIN_TOKEN` or generated); empty
   * on a shared store, whose tenant's token the owner made (`omotai tenant token`).
   */
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
  /** The isolation every session's browser gets (`netns`, or `none` and why). */
  isolation: IsolationFact;
  /** The tenant it serves (`default` on the embedded store). */
  tenant: string;
  /**
   * Writes the `runtime_stopped` row and the final signed checkpoint now (once): for a
   * shutdown whose teardown outlasted its bound before reaching them.
   */
  sealAudit(): Promise<void>;
}

/** Starts the runtime; resolves once it is listening. */
export async function startRuntime(options: StartOptions): Promise<Runtime> {
  const executable = options.browser ??
    findBrowser(Deno.env.get("OMOTAI_BROWSER"), { headful: options.headful });
  // Everything below is registered here the moment it exists: a start that fails at any step
  // undoes what it made, and the runtime's end is this same teardown, in reverse order.
  const teardown = new Teardown({ onDefer: options.onStep });
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => resolveDone = r);
  try {
    teardown.defer("done", () => resolveDone());
    const stores = await openStores(options, teardown);
    const admin = operatorCredential(stores);
    const boundary = await openBoundary({ ...options, browser: executable }, stores, teardown);
    const { audit, domains, agents } = stores;
    const { worlds, approvals, questions } = boundary;
    // Shutdown waits for every session's browser and profile, not just for its server's close.
    const sessions = new Disposals();
    // A connection that arrived while the servers closed.
    teardown.defer("sessions", () => sessions.disposeAll());
    /** Live sessions by id, for the console. */
    const live = new Map<string, BrowserSession>();
    // The same beat on either store: every console of the tenant lists this runtime's
    // sessions, and a kill marked in the store ends its session here.
    const mirror = mirrorLiveSessions({ live, store: stores.live, tenant: stores.tenant });
    teardown.defer("live sessions mirror", () => mirror[Symbol.asyncDispose]());
    // Sessions and the warm pool start browsers by the same recipe (the pinned build only).
    const pin = boundary.pin;
    const start = browserStart({
      profiles: boundary.profiles,
      executable,
      headful: options.headful,
      isolation: boundary.isolation,
      groups: boundary.groups,
      cdpByteRate: byteRates(boundary.runtimeWorld.policy).cdp,
      verifyExecutable: pin ? () => pin.check() : undefined,
    }, teardown);
    const pool = openWarmPool(
      start,
      { proxy: boundary.proxy, audit },
      { size: options.warmBrowsers, mode: options.mode },
      teardown,
    );
    const newServer = connectionFactory({
      ...boundary,
      start,
      pool,
      audit,
      mode: options.mode,
      sessions,
      live,
      grants: stores.grants,
      leases: stores.leases,
      vault: stores.vault,
      dialogLoopWindowMs: options.dialogLoopWindowMs,
      callWatch: options.callWatch,
    });
    /** The operator console over this runtime's stores. */
    const consoleApp: ConsoleFactory = (allowedHosts, http) =>
      operatorConsole({
        adminToken: admin.credential,
        allowedHosts,
        approvals,
        questions,
        live,
        agents,
        domains,
        stores,
        worlds,
        closeAgent: (name) => http?.closeAgent(name) ?? Promise.resolve(0),
        capacity: http
          ? () => ({
            open: http.connectionCount(),
            max: http.maxSessions ?? null,
            agentShare: http.maxSessions === undefined ? null : defaultAgentShare(http.maxSessions),
          })
          : () => ({ open: live.size, max: null, agentShare: null }),
      });
    const runtime: Runtime = {
      policy: boundary.runtimeWorld.policy,
      audit: stores.auditStore,
      domains,
      agents,
      adminToken: admin.token,
      adminTokenGenerated: admin.generated,
      done,
      isolation: boundary.isolationFact,
      tenant: stores.tenant,
      sealAudit: () => stores.seal(),
      // Concurrent callers (a signal during a stdin-close shutdown) all wait for the same run.
      [Symbol.asyncDispose]: () => teardown.run(),
    };
    if (options.demoSite) {
      runtime.demoUrl = serveDemo(teardown, options.demoPort ?? options.port + 1);
    }
    const serve = { teardown, newServer, consoleApp, worlds };
    if (options.mode === "stdio") {
      Object.assign(runtime, await serveStdio(serve, options, () => resolveDone()));
    } else {
      Object.assign(
        runtime,
        await serveHttp({
          ...serve,
          agents,
          policyOf: async (agent) => (await agentWorld(boundary, agent)).policy,
          audit,
        }, {
          ...options,
          maxSessions: options.maxSessions ?? machineMaxSessions(),
        }),
      );
    }
    // Browsers first: a server or transport that hangs on close must not keep them alive.
    teardown.defer("sessions before servers", () => sessions.disposeAll());
    return runtime;
  } catch (err) {
    await teardown.run();
    throw err;
  }
}

/** What stands between sessions and the world: TLS authority, profiles, proxy, policies. */
export interface BoundaryParts {
  profiles: ProfileStore;
  proxy: EgressProxy;
  approvals: ApprovalBoard;
  questions: QuestionBoard;
  /** The console's queue and questions, or refusals when no human is reachable. */
  approver: Approver;
  human: HumanChannel | undefined;
  worlds: PolicyWorlds;
  runtimeWorld: PolicyWorld;
  /** What isolation the browsers get, and the sandbox each launch goes through (if any). */
  isolationFact: IsolationFact;
  isolation?: LaunchIsolation;
  /** A cgroup per browser (none where this machine cannot give one). */
  groups?: LaunchGroups;
  /** The pinned browser, checked again before each launch; none when nothing is pinned. */
  pin?: BrowserPin;
}

/**
 * This start's TLS authority, profile store, egress proxy, approval queue and policy worlds,
 * each registered on the teardown as it is made; resolves once the runtime's own policy is
 * verified, the browser found the pinned build when one is pinned (and `runtime_started` is
 * written).
 */
export async function openBoundary(
  options: StartOptions & { browser: string },
  stores: Stores,
  teardown: Teardown,
): Promise<BoundaryParts> {
  const { audit, domains } = stores;
  // A fresh authority per start, in the data dir (0600): the proxy terminates TLS with it.
  // The authority's key is of no use after this start: it does not outlive it on disk.
  const caDir = `${options.dataDir}/proxy-ca`;
  teardown.defer("TLS authority", () => Deno.remove(caDir, { recursive: true }).catch(() => {}));
  const authority = await TlsAuthority.create(caDir);
  const profiles = await ProfileStore.open(options.dataDir);
  teardown.defer("profile store", () => profiles[Symbol.asyncDispose]());
  const isolated = await openIsolation(
    options.isolation,
    { dataDir: options.dataDir, instanceDir: profiles.instanceDir, headful: options.headful },
    teardown,
  );
  const proxy = EgressProxy.start({ authority, upstreamCa: options.upstreamCa, ...isolated.proxy });
  if (proxy.pid !== undefined) options.onChild?.(proxy.pid);
  teardown.defer("egress proxy", () => proxy[Symbol.asyncDispose]());
  // The tenant's approvals of every runtime on the shared store; this runtime's own else.
  const approvals = new ApprovalBoard(
    stores.shared?.board ?? new MemoryDecisionStore("approval"),
    audit,
  );
  teardown.defer("approval queue", () => approvals.close());
  const questions = new QuestionBoard(
    stores.shared?.questions ?? new MemoryDecisionStore("question"),
    audit,
  );
  teardown.defer("operator questions", () => questions.close());
  // In stdio mode without --console no human is reachable: confirmations are refused at once.
  const withConsole = options.mode === "sse" || options.console === true;
  const approver: Approver = withConsole ? approvals : unavailableApprover;
  const human: HumanChannel | undefined = withConsole ? questions : undefined;
  const worlds = new PolicyWorlds({ domains, audit, proxy, approver });
  teardown.defer("policy worlds", () => worlds[Symbol.asyncDispose]());
  // The runtime's own policy is verified before anything serves: a refused module stops it.
  const runtimeWorld = await worlds.get(options.policy);
  // Each browser's cgroup, sized by the runtime's own policy and the session cap.
  const { fact, groups } = await isolated.bound({
    memoryMb: runtimeWorld.policy.limits?.browser_memory_mb,
    maxSessions: options.mode === "stdio" ? 1 : options.maxSessions ?? machineMaxSessions(),
  });
  // Every listener opened from now on meters its held bodies as the runtime's policy says.
  proxy.meterHeldBodies(byteRates(runtimeWorld.policy).heldBodies);
  // The runtime's own policy may require isolation: then no start without it.
  requireIsolation(runtimeWorld.policy, fact, audit, null);
  // Before any browser is launched (the warm pool's first included): the pinned build or none.
  const pin = await pinBrowser(options, runtimeWorld.policy, audit);
  audit.append({
    kind: "runtime_started",
    source: "lifecycle",
    decision: "event",
    reason: runtimeWorld.engine.modules.map((m) => m.name).join(","),
  });
  // What every browser of this start gets: `netns`, or `none` (the log line says why), and
  // its cgroup (`cgroup v2`, `cgroup v1`, `none`).
  audit.append({
    kind: "browser_isolation",
    source: "lifecycle",
    decision: "event",
    reason: fact.kind,
    rule: fact.cgroup?.backend === "none" || !fact.cgroup
      ? "no cgroup"
      : `cgroup ${fact.cgroup.backend}`,
  });
  stores.lifecycle.started = true;
  return {
    profiles,
    proxy,
    approvals,
    questions,
    approver,
    human,
    worlds,
    runtimeWorld,
    isolationFact: fact,
    isolation: isolated.launcher(proxy),
    groups,
    pin,
  };
}

/**
 * The browser pinned by `--browser-sha256` and the runtime policy's `browser_sha256`, checked
 * now; a refusal is audited (`browser_pin`, denied with its code) and stops the start.
 */
async function pinBrowser(
  options: StartOptions & { browser: string },
  policy: PolicyFile,
  audit: AuditWriter,
): Promise<BrowserPin | undefined> {
  const pins: PinSource[] = [];
  if (options.browserSha256 !== undefined) pins.push(options.browserSha256);
  if (policy.browser_sha256 !== undefined) {
    pins.push({
      sha256: policy.browser_sha256,
      from: `browser_sha256 of ${options.policy ?? "the runtime's policy"}`,
    });
  }
  try {
    const pin = await BrowserPin.open(options.browser, pins);
    if (pin) log(`browser pinned: ${options.browser} is the build ${pins[0].from} names`);
    return pin;
  } catch (err) {
    audit.append({
      kind: "browser_pin",
      source: "lifecycle",
      decision: "deny",
      reason: errorCode(err) ?? "ERROR",
    });
    throw err;
  }
}

/**
 * The console's credential: on a shared store the tenant's admin token, checked by the hash
 * the owner set (`omotai tenant token`); else `OMOTAI_ADMIN_TOKEN` or a generated one.
 */
function operatorCredential(
  stores: Stores,
): { credential: string | ((presented: string) => boolean); token: string; generated: boolean } {
  const shared = stores.shared;
  if (shared) {
    if (Deno.env.get("OMOTAI_ADMIN_TOKEN")) {
      log("OMOTAI_ADMIN_TOKEN is not used with --database: the tenant's admin token is");
    }
    return { credential: (t) => shared.admin.verify(t), token: "", generated: false };
  }
  const admin = adminToken(Deno.env.get("OMOTAI_ADMIN_TOKEN"));
  return { credential: admin.token, ...admin };
}

/** The origins the runtime answers on: the controlled browser may never reach them. */
export { runtimeOrigins };

/** Logs and swallows errors of a shutdown path. */
export function logShutdownError(err: unknown): void {
  log(`shutdown: ${(err as Error).name}`);
}
