/**
 * The operator console over one runtime's stores: its approval queue and questions, live
 * sessions, agent keys, domain rules, grants, audit and loaded policies, adapted to the
 * console's ports.
 *
 * @module
 */
import type { AgentStore } from "../agents/agent_store.ts";
import type { AuditRow } from "../audit/audit_row.ts";
import type { AuditStore } from "../audit/audit_store.ts";
import type { BrowserSession } from "../browser/browser_session.ts";
import type { DomainStore } from "../gate/domain_store.ts";
import { GrantError, type GrantPort } from "../grants/mod.ts";
import { log } from "../log.ts";
import { processRedactor } from "../redact/mod.ts";
import { createConsoleApp } from "../../ui/console_app.ts";
import type {
  ApprovalsPort,
  AuditPort,
  GrantsPort,
  QuestionsPort,
  SessionInfo,
  SessionsPort,
} from "../../ui/ports.ts";
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
  /** The audit chain, the grants, and on a shared store every runtime's sessions. */
  stores: Pick<Stores, "auditStore" | "grants" | "shared" | "tenant" | "available">;
  worlds: PolicyWorlds;
  /** Closes the live sessions of an agent whose key the operator removed. */
  closeAgent(name: string): Promise<number>;
  /** Sessions open and the cap (sse mode). */
  capacity?(): { open: number; max: number | null };
}

/** Builds the console app. */
export function operatorConsole(d: OperatorConsoleDeps): ReturnType<typeof createConsoleApp> {
  return createConsoleApp({
    adminToken: d.adminToken,
    allowedHosts: d.allowedHosts,
    approvals: d.approvals,
    questions: d.questions,
    sessions: sessionsPort(d),
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
    grants: grantsPort(d.stores.grants),
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

/**
 * The grants as the console uses them: a refused approval or revocation of a grant that is
 * unknown or no longer in that state is an answer (404, 409), not an error; anything else
 * (`GRANT_INVALID`, `SECRET_NOT_FOUND`, `AUDIT_UNAVAILABLE`, …) goes up with its code.
 */
export function grantsPort(store: GrantPort): GrantsPort {
  const codeOf = (err: unknown) => err instanceof GrantError ? err.code : undefined;
  return {
    list: () => store.list(),
    add: (request, approve, by) => store.add(request, { approve, by }),
    approve: async (id, by) => {
      try {
        await store.approve(id, { by });
        return "ok";
      } catch (err) {
        const code = codeOf(err);
        if (code === "GRANT_NOT_FOUND") return "unknown";
        if (code === "GRANT_NOT_PENDING" || code === "GRANT_REVOKED" || code === "GRANT_EXPIRED") {
          return "not_pending";
        }
        throw err;
      }
    },
    revoke: async (id, by) => {
      try {
        await store.revoke(id, { by });
        return "ok";
      } catch (err) {
        const code = codeOf(err);
        if (code === "GRANT_NOT_FOUND") return "unknown";
        if (code === "GRANT_REVOKED") return "already_revoked";
        throw err;
      }
    },
  };
}

/**
 * The live sessions: this runtime's, or on a shared store the tenant's of every runtime (one
 * whose runtime stopped beating shown as gone). A kill of another runtime's session marks
 * its row, and that runtime ends it at its next beat.
 */
function sessionsPort(d: OperatorConsoleDeps): SessionsPort {
  const local = (): SessionInfo[] =>
    [...d.live.values()].map((s) => ({
      id: s.id,
      agent: s.agent,
      // A host name can hold a secret a page put there (it is page data like any other).
      origin: redactOrigin(s.currentOrigin()),
      actionsUsed: s.state.counters().actionsUsed,
      tainted: s.state.tainted,
      isolation: s.isolation,
      startedAt: new Date(s.state.startedAt).toISOString(),
      ...(s.state.activity ? { activity: s.state.activity } : {}),
    }));
  const shared = d.stores.shared;
  return {
    list: shared
      ? async () => {
        const here = new Map(local().map((s) => [s.id, s]));
        const rows = await shared.live.list(d.stores.tenant);
        const listed = rows.map((r) =>
          here.get(r.id) ?? {
            id: r.id,
            agent: r.agent,
            origin: redactOrigin(r.origin),
            actionsUsed: r.actionsUsed,
            tainted: r.tainted,
            isolation: r.isolation === "netns" ? "netns" as const : "none" as const,
            startedAt: r.startedAt,
            runtime: r.runtime,
            gone: r.gone,
          }
        );
        // A session opened since the last beat has no row yet.
        for (const s of here.values()) if (!rows.some((r) => r.id === s.id)) listed.push(s);
        return listed;
      }
      : local,
    capacity: d.capacity,
    kill: async (id) => {
      const s = d.live.get(id);
      if (s) {
        await s[Symbol.asyncDispose]();
        return true;
      }
      return shared ? await shared.live.kill(d.stores.tenant, id) : false;
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
