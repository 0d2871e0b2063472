/**
 * The embedded `DomainStore`: dynamic domain rules, origins an operator allows or denies
 * while the runtime runs (`omotai domain add|rm|list`). The table is reread whenever SQLite's change counter
 * moves, so a rule applies to the next action and the next request without a restart.
 * A table that cannot be read makes every decision a deny (`DOMAINS_UNREADABLE`).
 *
 * @module
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { OmotaiError } from "../mod.ts";
import { asPromise } from "./as_promise.ts";
import {
  type DomainRule,
  type DomainSnapshot,
  type DomainStore,
  parseRuleOrigin,
} from "./domain_store.ts";

/** Reads and writes the `domain_rules` table of the embedded database. */
export class SqliteDomainStore implements DomainStore {
  #db: DatabaseSync;
  #seen: number | undefined;
  #localWrites = 0;
  #seenLocal = -1;
  #snapshot: DomainSnapshot = { generation: 0, allow: new Set(), deny: new Set() };
  /** Asked on every decision: prepared once (preparing cost more than the query). */
  #version: StatementSync | undefined;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /** Adds or replaces the rule for `origin`; returns the normalized origin. */
  add(origin: string, rule: "allow" | "deny"): Promise<string> {
    return asPromise(() => this.#add(origin, rule));
  }

  /** Removes the rule for `origin`; false when there was none. */
  remove(origin: string): Promise<boolean> {
    return asPromise(() => this.#remove(origin));
  }

  /** Every rule, by origin. */
  list(): Promise<DomainRule[]> {
    return asPromise(() => this.#list());
  }

  #add(origin: string, rule: "allow" | "deny"): string {
    const normalized = parseRuleOrigin(origin);
    this.#db.prepare(
      "INSERT INTO domain_rules (origin, rule, added_at) VALUES (?, ?, ?) " +
        "ON CONFLICT(origin) DO UPDATE SET rule = excluded.rule, added_at = excluded.added_at",
    ).run(normalized, rule, new Date().toISOString());
    this.#localWrites++;
    return normalized;
  }

  #remove(origin: string): boolean {
    const result = this.#db.prepare("DELETE FROM domain_rules WHERE origin = ?")
      .run(parseRuleOrigin(origin));
    this.#localWrites++;
    return Number(result.changes) > 0;
  }

  #list(): DomainRule[] {
    return this.#db.prepare("SELECT origin, rule, added_at FROM domain_rules ORDER BY origin")
      .all() as unknown as DomainRule[];
  }

  /**
   * The current rules; rereads only when another connection (or this one) changed the
   * database. Throws `DOMAINS_UNREADABLE` when the table cannot be read.
   */
  current(): DomainSnapshot {
    try {
      this.#version ??= this.#db.prepare("PRAGMA data_version");
      const { data_version: version } = this.#version.get() as {
        data_version: number;
      };
      if (version === this.#seen && this.#localWrites === this.#seenLocal) return this.#snapshot;
      const allow = new Set<string>();
      const deny = new Set<string>();
      for (const r of this.#list()) (r.rule === "deny" ? deny : allow).add(r.origin);
      this.#seen = version;
      this.#seenLocal = this.#localWrites;
      this.#snapshot = { generation: this.#snapshot.generation + 1, allow, deny };
      return this.#snapshot;
    } catch (err) {
      throw new OmotaiError(
        "DOMAINS_UNREADABLE",
        `the domain rules cannot be read: ${(err as Error).message}`,
      );
    }
  }
}
