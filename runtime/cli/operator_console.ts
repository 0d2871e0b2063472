/**
 * The operator console over one runtime's stores: its approval queue and questions, live
 * sessions, agent keys, domain rules, grants, audit and loaded policies, adapted to the
 * console's ports.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import type { AgentKeys } from "../agents/agent_keys.ts";
import type { ApprovalQueue, HumanQuestions } from "../approvals/mod.ts";
import type { AuditLog } from "../audit/audit_log.ts";
import type { AuditRow } from "../audit/audit_row.ts";
import { verifyAudit } from "../audit/verify.ts";
import type { BrowserSession } from "../browser/browser_session.ts";
import type { DomainRules } from "../gate/domains.ts";
import { GrantError, GrantStore } from "../grants/mod.ts";
import { Vault } from "../../vault/mod.ts";
import { log } from "../log.ts";
import { processRedactor } from "../redact/mod.ts";
import { createConsoleApp } from "../../ui/console_app.ts";
import type { GrantsPort } from "../../ui/ports.ts";
import type { PolicyWorlds } from "./policy_worlds.ts";

/** A page origin as the console shows it: a host name can hold a secret a page put there. */
const redactOrigin = (o: string | null) => o === null ? null : processRedactor().redact(o);

/** What the console is built over. */
export interface OperatorConsoleDeps {
  adminToken: string;
  allowedHosts: readonly string[];
  approvals: ApprovalQueue;
  questions: HumanQuestions;
  /** Live sessions by id. */
  live: ReadonlyMap<string, BrowserSession>;
  agents: AgentKeys;
  domains: DomainRules;
  db: DatabaseSync;
  audit: AuditLog;
  worlds: PolicyWorlds;
  /** The grants; default: a `GrantStore` over `db` auditing to `audit`, asking `Vault.has`. */
  grants?: GrantStore;
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
    sessions: {
      list: () =>
        [...d.live.values()].map((s) => ({
          id: s.id,
          agent: s.agent,
          // A host name can hold a secret a page put there (it is page data like any other).
          origin: redactOrigin(s.currentOrigin()),
          actionsUsed: s.state.counters().actionsUsed,
          tainted: s.state.tainted,
          isolation: s.isolation,
          startedAt: new Date(s.state.startedAt).toISOString(),
        })),
      capacity: d.capacity,
      kill: async (id) => {
        const s = d.live.get(id);
        if (!s) return false;
        await s[Symbol.asyncDispose]();
        return true;
      },
    },
    agents: {
      list: () => d.agents.list(),
      add: (name, policy) => d.agents.add(name, policy),
      remove: (name) => {
        const removed = d.agents.remove(name);
        if (removed) d.closeAgent(name).catch((e) => log(`closing sessions: ${(e as Error).name}`));
        return removed;
      },
    },
    domains: d.domains,
    grants: grantsPort(
      d.grants ??
        new GrantStore(d.db, { audit: d.audit, secrets: { has: (id) => Vault.has(d.db, id) } }),
    ),
    audit: auditPort(d.db, d.audit),
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
export function grantsPort(store: GrantStore): GrantsPort {
  const codeOf = (err: unknown) => err instanceof GrantError ? err.code : undefined;
  return {
    list: () => store.list(),
    add: (request, approve, by) => store.add(request, { approve, by }),
    approve: (id, by) => {
      try {
        store.approve(id, { by });
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
    revoke: (id, by) => {
      try {
        store.revoke(id, { by });
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

/** The audit as the console reads it: newest first with filters, the chain, a JSONL export. */
function auditPort(db: DatabaseSync, audit: AuditLog) {
  return {
    rows: (f: { limit: number; before?: number; session?: string; decision?: string }) =>
      db.prepare(
        "SELECT * FROM audit WHERE (?1 IS NULL OR seq < ?1) AND (?2 IS NULL OR session = ?2) " +
          "AND (?3 IS NULL OR decision = ?3) ORDER BY seq DESC LIMIT ?4",
      ).all(
        f.before ?? null,
        f.session ?? null,
        f.decision ?? null,
        f.limit,
      ) as unknown as AuditRow[],
    verify: () => {
      const r = verifyAudit(db);
      return { ok: r.ok, rows: r.rows, error: r.problems[0] };
    },
    *export(): Iterable<AuditRow> {
      for (let after = 0;;) {
        const page = audit.rows(after, 1_000);
        if (page.length === 0) return;
        yield* page;
        after = page.at(-1)!.seq;
      }
    },
  };
}
