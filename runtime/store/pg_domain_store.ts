/**
 * The PostgreSQL `DomainStore`: one tenant's domain rules. The gate reads them on every
 * decision, so the runtime keeps a snapshot and refreshes it when any runtime changes them (`NOTIFY`, the
 * tenant's hash as payload) and on a poll behind that. A change made here is in the snapshot
 * before `add` or `remove` returns. When no refresh succeeded for `staleMs` (the database is
 * gone), `current()` throws `DOMAINS_UNREADABLE` and every decision is a deny, until a
 * refresh succeeds again.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { OmotaiError } from "../mod.ts";
import {
  type DomainRule,
  type DomainSnapshot,
  type DomainStore,
  parseRuleOrigin,
} from "./domain_store.ts";
import type { PgDatabase } from "./pg_database.ts";

/** The channel rule changes are announced on. */
export const DOMAINS_CHANNEL = "omotai_domains";

/** Options of `PgDomainStore.open`. */
export interface PgDomainOptions {
  /** The poll behind the notifications (default 2 s). */
  pollMs?: number;
  /** How old the snapshot may grow before decisions are denied (default 10 s). */
  staleMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface Row {
  origin: string;
  rule: "allow" | "deny";
  added_at: Date;
}

/** Tenant `tenant`'s rules, as a snapshot kept fresh. */
export class PgDomainStore implements DomainStore, AsyncDisposable {
  readonly tenant: string;
  readonly #db: PgDatabase;
  readonly #hash: string;
  readonly #staleMs: number;
  readonly #now: () => number;
  #snapshot: DomainSnapshot = { generation: 0, allow: new Set(), deny: new Set() };
  #fingerprint = "";
  #freshAt = -Infinity;
  #timer: ReturnType<typeof setInterval> | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #refreshing: Promise<void> | undefined;

  private constructor(db: PgDatabase, tenant: string, options: PgDomainOptions) {
    this.#db = db;
    this.tenant = tenant;
    this.#hash = createHash("sha256").update(tenant).digest("hex");
    this.#staleMs = options.staleMs ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  /** Reads the rules once, then listens and polls. */
  static async open(
    db: PgDatabase,
    tenant: string,
    options: PgDomainOptions = {},
  ): Promise<PgDomainStore> {
    const rules = new PgDomainStore(db, tenant, options);
    await rules.refresh();
    rules.#unlisten = await db.listen(DOMAINS_CHANNEL, (payload) => {
      if (payload === rules.#hash) rules.refresh().catch(() => {});
    });
    rules.#timer = setInterval(() => rules.refresh().catch(() => {}), options.pollMs ?? 2_000);
    Deno.unrefTimer(rules.#timer);
    return rules;
  }

  async add(origin: string, rule: "allow" | "deny"): Promise<string> {
    const normalized = parseRuleOrigin(origin);
    await this.#db.tenant(this.tenant, (tx) => tx`SELECT domain_set(${normalized}, ${rule})`);
    await this.#reread();
    return normalized;
  }

  async remove(origin: string): Promise<boolean> {
    const normalized = parseRuleOrigin(origin);
    const [{ gone }] = await this.#db.tenant(
      this.tenant,
      (tx) => tx<{ gone: boolean }[]>`SELECT domain_remove(${normalized}) AS gone`,
    );
    // A read already in flight may predate the removal: a removed allow must not linger.
    await this.#reread();
    return gone;
  }

  async list(): Promise<DomainRule[]> {
    return (await this.#read()).map((r) => ({
      origin: r.origin,
      rule: r.rule,
      added_at: r.added_at.toISOString(),
    }));
  }

  current(): DomainSnapshot {
    if (this.#now() - this.#freshAt > this.#staleMs) {
      throw new OmotaiError(
        "DOMAINS_UNREADABLE",
        "the domain rules could not be read from the database lately",
      );
    }
    return this.#snapshot;
  }

  /** Rereads the rules (one read at a time; a caller arriving meanwhile waits for it). */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#read().then((rows) => {
      const fingerprint = rows.map((r) => `${r.origin}\0${r.rule}`).join("\n");
      if (fingerprint !== this.#fingerprint) {
        this.#fingerprint = fingerprint;
        const allow = new Set<string>();
        const deny = new Set<string>();
        for (const r of rows) (r.rule === "deny" ? deny : allow).add(r.origin);
        this.#snapshot = { generation: this.#snapshot.generation + 1, allow, deny };
      }
      this.#freshAt = this.#now();
    }).finally(() => this.#refreshing = undefined);
    return this.#refreshing;
  }

  /** A read that starts after this runtime's own change (one in flight may predate it). */
  async #reread(): Promise<void> {
    await this.#refreshing?.catch(() => {});
    await this.refresh();
  }

  async #read(): Promise<Row[]> {
    return await this.#db.tenant(
      this.tenant,
      (tx) =>
        tx<Row[]>`SELECT origin, rule, added_at FROM domain_rules
        WHERE tenant_id = ${this.tenant} ORDER BY origin`,
    );
  }

  async [Symbol.asyncDispose](): Promise<void> {
    clearInterval(this.#timer);
    await this.#unlisten?.();
  }
}
