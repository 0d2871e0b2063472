/**
 * The per-connection factory of `omotai start`: each MCP connection gets its own
 * `BrowserSession` (its agent's policy world, or the runtime's) and MCP server, tracked so the
 * runtime's teardown waits for its browser and profile.
 *
 * @module
 */
import type { Vault } from "../../vault/mod.ts";
import type { AgentInfo, AuditWriter, CaptureLeaseStore } from "../store/mod.ts";
import {
  type Admission,
  BrowserSession,
  type BrowserStart,
  type CallWatchBounds,
  type WarmSource,
} from "../browser/mod.ts";
import { log, type OmotaiError } from "../mod.ts";
import type { Grants } from "../grants/mod.ts";
import { createMcpServer } from "../mcp/mod.ts";
import { processRedactor } from "../redact/mod.ts";
import type { HumanChannel } from "../tools/mod.ts";
import type { IsolationFact } from "../isolation/mod.ts";
import { requireIsolation } from "./browser_isolation.ts";
import { grantCaptureService } from "./capture_service.ts";
import { grantLoginService } from "./login_service.ts";
import type { PolicyWorld, PolicyWorlds } from "./policy_worlds.ts";
import { consolePushChannel } from "./push_channel.ts";
import type { Disposals } from "./shutdown.ts";
import { startupLogin } from "./startup_login.ts";

/** What every connection is built from. */
export interface ConnectionDeps {
  worlds: PolicyWorlds;
  /** The runtime's own policy world (a connection without an agent policy). */
  runtimeWorld: PolicyWorld;
  /** How this runtime starts browsers (`browserStart()`), and admits its sessions' loads. */
  start: BrowserStart & { loads?: Admission };
  audit: AuditWriter;
  mode: "stdio" | "sse";
  /** Sessions the teardown waits for. */
  sessions: Disposals;
  /** Live sessions by id, for the console. */
  live: Map<string, BrowserSession>;
  human: HumanChannel | undefined;
  grants: Grants;
  /** The tenant's capture leases. */
  leases: CaptureLeaseStore;
  vault: Vault | undefined;
  /** Browsers started ahead of their sessions. */
  pool?: WarmSource;
  /** What isolation this machine gives, and why not when it gives none. */
  isolationFact: IsolationFact;
  /** The dialog rate rule's window (`StartOptions.dialogLoopWindowMs`). */
  dialogLoopWindowMs?: number;
  /** The call watch's bounds (`StartOptions.callWatch`). */
  callWatch?: CallWatchBounds;
}

/** A connection's MCP server. */
export type McpServer = ReturnType<typeof createMcpServer>;

/**
 * The policy world a connection of `agent` runs under: its own policy's, or the runtime's for
 * an agent without one (and for stdio). One that cannot be built rejects, and the operator's
 * log says why (the client sees only that its connection failed).
 */
export async function agentWorld(
  d: Pick<ConnectionDeps, "worlds" | "runtimeWorld">,
  agent: AgentInfo | undefined,
): Promise<PolicyWorld> {
  if (!agent?.policy) return d.runtimeWorld;
  return await d.worlds.get(agent.policy).catch((err) => {
    log(`agent ${agent.name}: ${(err as OmotaiError).code ?? "ERROR"}: ${(err as Error).message}`);
    throw err;
  });
}

/** A connection's server: its agent's policy (or the runtime's), its identity from its key. */
export function connectionFactory(
  d: ConnectionDeps,
): (agent: AgentInfo | undefined) => Promise<McpServer> {
  return async (agent) => {
    const world = await agentWorld(d, agent);
    // Before a session exists: a policy that requires isolation gets none without it.
    requireIsolation(world.policy, d.isolationFact, d.audit, agent?.name ?? null);
    const session = new BrowserSession({
      ...d.start,
      audit: d.audit,
      hooks: world.hooks,
      pool: d.pool,
      dialogLoopWindowMs: d.dialogLoopWindowMs,
      callWatch: d.callWatch,
    });
    session.agent = agent?.name ?? (d.mode === "stdio" ? "stdio" : null);
    d.live.set(session.id, session);
    const dispose = session[Symbol.asyncDispose].bind(session);
    session[Symbol.asyncDispose] = () => dispose().finally(() => d.live.delete(session.id));
    const human = d.human;
    return createMcpServer({
      session: d.sessions.track(session),
      gate: world.gate,
      settings: world.settings,
      human,
      login: {
        ...grantLoginService({
          grants: d.grants,
          vault: d.vault,
          redactor: processRedactor(),
          taintAfterLogin: world.policy.taint_after_login,
          boundary: world.boundary,
          loginOrigins: world.loginOrigins,
        }),
        push: human ? (s) => consolePushChannel(human, s) : undefined,
        startup: world.policy.login
          ? startupLogin(world.policy.login, {
            vault: d.vault,
            redactor: processRedactor(),
            boundary: world.boundary,
            loginOrigins: world.loginOrigins,
            push: human ? (s) => consolePushChannel(human, s) : undefined,
          })
          : undefined,
      },
      capture: grantCaptureService({
        grants: d.grants,
        leases: d.leases,
        vault: d.vault,
        redactor: processRedactor(),
        boundary: world.boundary,
        templates: world.policy.capture,
      }),
    });
  };
}
