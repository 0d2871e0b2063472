/**
 * Domain rules as a port: add, remove and list one tenant's rules, and read the current
 * snapshot on every decision (synchronously: the gate asks it per action and per request).
 * `SqliteDomainStore` (`sqlite_domain_store.ts`) is the embedded default; `PgDomainStore`
 * (`pg_domain_store.ts`) keeps a snapshot of the tenant's rules in PostgreSQL, refreshed when
 * any runtime changes them. One contract suite (`domain_store_contract_test.ts`) runs against
 * both.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";
import { normalizeOrigin } from "../net/mod.ts";

/** One stored rule. */
export interface DomainRule {
  origin: string;
  rule: "allow" | "deny";
  added_at: string;
}

/** The rules as of one read. */
export interface DomainSnapshot {
  /** Increases whenever the rules were reread after a change. */
  readonly generation: number;
  readonly allow: ReadonlySet<string>;
  readonly deny: ReadonlySet<string>;
}

/** One tenant's domain rules. */
export interface DomainStore {
  /** Adds or replaces the rule for `origin`; returns the normalized origin (`BAD_ORIGIN`). */
  add(origin: string, rule: "allow" | "deny"): Promise<string>;
  /** Removes the rule for `origin`; false when there was none. */
  remove(origin: string): Promise<boolean>;
  /** Every rule, by origin. */
  list(): Promise<DomainRule[]>;
  /** The rules now; throws `DOMAINS_UNREADABLE` when they cannot be known (callers deny). */
  current(): DomainSnapshot;
}

/** Normalizes an operator's origin or throws `BAD_ORIGIN` (every adapter stores this form). */
export function parseRuleOrigin(input: string): string {
  const origin = normalizeOrigin(input);
  if (!origin) {
    throw new OmotaiError(
      "BAD_ORIGIN",
      `"${input.slice(0, 200)}" is not an http(s) origin (e.g. https://portal.example)`,
    );
  }
  return origin;
}
