/**
 * Agent keys as a port: add, verify, list and remove one tenant's agents, the same way
 * whichever database holds them. `sqliteAgentStore` is the embedded default (one tenant);
 * `PgAgentStore` (`pg_agent_store.ts`) keeps every tenant's in PostgreSQL. One contract
 * suite (`agent_store_contract_test.ts`) runs against both.
 *
 * @module
 */
import { asPromise } from "../store/as_promise.ts";
import { DEFAULT_TENANT } from "../store/tenant.ts";
import type { AgentInfo, AgentKeys, NewAgent } from "./agent_keys.ts";

/** An agent and the tenant its key belongs to. */
export interface TenantAgent extends AgentInfo {
  readonly tenant: string;
}

/** One tenant's agents, and the key check for every tenant. */
export interface AgentStore {
  /** The tenant this store adds to, lists and removes from. */
  readonly tenant: string;
  /** Adds an agent to the tenant; its key is returned once and only its hash is kept. */
  add(name: string, policy?: string): Promise<NewAgent>;
  /** The agent (and tenant) whose key `key` is, whatever the tenant; undefined if none. */
  verify(key: string): Promise<TenantAgent | undefined>;
  /** The tenant's agents, by name (no keys, no hashes). */
  list(): Promise<AgentInfo[]>;
  /** Removes the tenant's agent `name`; false when it has none. */
  remove(name: string): Promise<boolean>;
}

/** The embedded SQLite agents as an `AgentStore` (its one tenant). */
export function sqliteAgentStore(keys: AgentKeys): AgentStore {
  return {
    tenant: DEFAULT_TENANT,
    add: (name, policy) => asPromise(() => keys.add(name, policy)),
    verify: (key) =>
      asPromise(() => {
        const info = keys.verify(key);
        return info ? { ...info, tenant: DEFAULT_TENANT } : undefined;
      }),
    list: () => asPromise(() => keys.list().map((a) => ({ ...a }))),
    remove: (name) => asPromise(() => keys.remove(name)),
  };
}
