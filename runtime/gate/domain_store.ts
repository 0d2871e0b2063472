/**
 * Domain rules as a port: add, remove and list one tenant's rules, and read the current
 * snapshot on every decision (synchronously: the gate asks it per action and per request).
 * `sqliteDomainStore` is the embedded default; `PgDomainRules` (`pg_domain_rules.ts`) keeps
 * a snapshot of the tenant's rules in PostgreSQL, refreshed when any runtime changes them.
 * One contract suite (`domain_store_contract_test.ts`) runs against both.
 *
 * @module
 */
import { asPromise } from "../store/as_promise.ts";
import type { DomainRule, DomainRules, DomainSnapshot } from "./domains.ts";

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

/** The embedded SQLite rules as a `DomainStore`. */
export function sqliteDomainStore(rules: DomainRules): DomainStore {
  return {
    add: (origin, rule) => asPromise(() => rules.add(origin, rule)),
    remove: (origin) => asPromise(() => rules.remove(origin)),
    list: () => asPromise(() => rules.list().map((r) => ({ ...r }))),
    current: () => rules.current(),
  };
}
