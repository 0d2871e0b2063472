/**
 * The operator console over one runtime's stores: its approval queue and questions, live
 * sessions, agent keys, domain rules, grants, audit and loaded policies. The console reads
 * agents, domain rules and grants through the runtime's own ports; the sessions and the
 * audit are adapted here.
 *
 * @module
 */
import type {
  AgentStore,
  AuditRow,
  AuditStore,
  DomainStore,
  LiveSessionStore,
} from "../store/mod.ts";
import type { BrowserSession } from "../browser/mod.ts";
import { log } from "../mod.ts";
import { processRedactor } from "../redact/mod.ts";
import {
  type ApprovalsPort,
  type AuditPort,
  type Capacity,
  createConsoleApp,
  type QuestionsPort,
  type SessionInfo,
  type SessionsPort,
} from "../../ui/mod.ts";
import type { Stores } from "./open_stores.ts";
import type { PolicyWorlds } from "./policy_worlds.ts";

/** A page origin as the console shows it: a host name can hold a secret a page put there. */
const redactOrigin = (o: string | null) => o === null ? null : processRedactor().redact(o);

/** What the console is built over. */
export interface OperatorConsoleDeps {
  /** The admin token, or a check of a presented one (a shared store's tenant token). */
  adminToken: string | ((presented: string) => boolean);
  allowedHosts: readonly string[];
  approvals: ApprovalsPort;
  questions: QuestionsPort;
  /** This runtime's live sessions by id. */
  live: ReadonlyMap<string, BrowserSession>;
  agents: AgentStore;
  domains: DomainStore;
  /** The audit chain, the grants, the live sessions (every runtime's on a shared store). */
  stores: Pick<Stores, "auditStore" | "grants" | "live" | "shared" | "tenant" | "available">;
  worlds: PolicyWorlds;
  /** Closes the live sessions of an agent whose key the operator removed. */
  closeAgent(name: string): Promise<number>;
  /** Sessions open and the cap (sse mode). */
  capacity?(): Capacity;
}

/** Builds the console app. */
export function operatorConsole(d: OperatorConsoleDeps): ReturnType<typeof createConsoleApp> {
  return createConsoleApp({
    adminToken: d.adminToken,
    allowedHosts: d.allowedHosts,
    approvals: d.approvals,
    questions: d.questions,
    sessions: sessionsPort({
      live: d.live,
      store: d.stores.live,
      tenant: d.stores.tenant,
      capacity: d.capacity,
    }),
    agents: {
      list: () => d.agents.list(),
      add: (name, policy) => d.agents.add(name, policy),
      remove: async (name) => {
        const removed = await d.agents.remove(name);
        if (removed) d.closeAgent(name).catch((e) => log(`closing sessions: ${(e as Error).name}`));
        return removed;
      },
    },
    domains: d.domains,
    grants: d.stores.grants,
    audit: auditPort(d.stores.auditStore),
    status: () => ({ storeAvailable: d.stores.available() }),
    operatorSessions: d.stores.shared?.operatorSessions,
    policies: {
      modules: async () =>
        (await d.worlds.loaded()).flatMap((w) =>
          w.engine.modules.map((m) => ({
            name: m.name,
            kind: m.kind,
            sha256: m.sha256,
            signer: m.signer ?? "unknown",
          }))
        ),
    },
    log,
  });
}

/** What the console reads of one of this runtime's sessions, and ends. */
export type ConsoleSession =
  & Pick<BrowserSession, "id" | "agent" | "isolation" | "state" | "currentOrigin">
  & Partial<Pick<BrowserSession, "cgroup">>
  & AsyncDisposable;

/** What the console's live sessions are built over. */
export interface LiveSessionsDeps {
  /** This runtime's sessions by id, as they are now. */
  live: ReadonlyMap<string, ConsoleSession>;
  /** The store `cli/live_mirror.ts` writes them into, with every other runtime's. */
  store: LiveSessionStore;
  tenant: string;
  capacity?(): Capacity;
}

/**
 * The live sessions, the same way on either store: this runtime's as its map holds them now
 * (a session opened since the last beat included, with the `activity` only this runtime
 * knows), and the store's rows of every other runtime of the tenant (one whose runtime
 * stopped beating shown as gone; the embedded store has none). A row of this runtime whose
 * session the map no longer holds has just ended: the next beat removes it. A kill ends a
 * session of this runtime at once; any other is marked, and its runtime ends it at its next
 * beat.
 */
export function sessionsPort(d: LiveSessionsDeps): SessionsPort {
  const local = (): SessionInfo[] =>
    [...d.live.values()].map((s) => ({
      id: s.id,
      agent: s.agent,
      // A host name can hold a secret a page put there (it is page data like any other).
      origin: redactOrigin(s.currentOrigin()),
      actionsUsed: s.state.counters().actionsUsed,
      tainted: s.state.tainted,
      isolation: s.isolation,
      ...(s.cgroup ? { cgroup: s.cgroup } : {}),
      startedAt: new Date(s.state.startedAt).toISOString(),
      ...(s.state.activity ? { activity: s.state.activity } : {}),
    }));
  return {
    list: async () => {
      const here = local();
      const ids = new Set(here.map((s) => s.id));
      const rows = await d.store.list(d.tenant);
      const others = rows.filter((r) => r.runtime !== d.store.runtime && !ids.has(r.id)).map((
        r,
      ): SessionInfo => ({
        id: r.id,
        agent: r.agent,
        origin: redactOrigin(r.origin),
        actionsUsed: r.actionsUsed,
        tainted: r.tainted,
        isolation: r.isolation === "netns" ? "netns" : "none",
        startedAt: r.startedAt,
        runtime: r.runtime,
        gone: r.gone,
      }));
      return [...here, ...others].sort((a, b) =>
        a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.id < b.id ? -1 : 1
      );
    },
    capacity: d.capacity,
    kill: async (id) => {
      const s = d.live.get(id);
      if (s) {
        await s[Symbol.asyncDispose]();
        return true;
      }
      return await d.store.kill(d.tenant, id);
    },
  };
}

/** The audit as the console reads it: newest first with filters, the chain, a JSONL export. */
function auditPort(store: AuditStore): AuditPort {
  return {
    rows: (f) => store.recent(f),
    verify: async () => {
      const r = await store.verify();
      return { ok: r.ok, rows: r.rows, error: r.problems[0] };
    },
    async *export(): AsyncIterable<AuditRow> {
      for (let after = 0;;) {
        const page = await store.rows(after, 1_000);
        if (page.length === 0) return;
        yield* page;
        after = page.at(-1)!.seq;
      }
    },
  };
}
