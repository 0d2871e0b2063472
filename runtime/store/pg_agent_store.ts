/**
 * The PostgreSQL `AgentStore`: one tenant's agents (`agents`, under row-level security). Only a key's
 * SHA-256 is stored. A key is checked before its tenant is known: `agent_by_key()` is the
 * one path across tenants, and it answers for exactly the presented key's hash.
 *
 * @module
 */
import {
  agentExists,
  type AgentInfo,
  agentKeyHash,
  type AgentStore,
  checkAgentName,
  draftAgent,
  type NewAgent,
  type TenantAgent,
} from "./agent_store.ts";
import { PgTenantStore } from "./pg_tenant_store.ts";

interface AgentRow {
  tenant_id: string;
  name: string;
  policy: string | null;
  created_at: string;
}

/** Tenant `tenant`'s agents in `db`. */
export class PgAgentStore extends PgTenantStore implements AgentStore {
  async add(name: string, policy?: string): Promise<NewAgent> {
    const draft = draftAgent(name, policy);
    const added = await this.inTenant((tx) =>
      tx`INSERT INTO agents (tenant_id, name, key_hash, policy, created_at)
        VALUES (${this.tenant}, ${name}, ${draft.keyHash}, ${draft.policy},
          ${new Date().toISOString()})
        ON CONFLICT (tenant_id, name) DO NOTHING RETURNING name`
    );
    if (added.length === 0) throw agentExists(name);
    return draft.agent;
  }

  async verify(key: string): Promise<TenantAgent | undefined> {
    // The hash is looked up, not compared in a loop: a SHA-256 of a 256-bit key is found by
    // an index, and nothing about other keys is read.
    const [row] = await this.db.transaction((tx) =>
      tx<AgentRow[]>`SELECT tenant_id, name, policy, created_at FROM agent_by_key(${
        agentKeyHash(key)
      })`
    );
    return row ? { ...info(row), tenant: row.tenant_id } : undefined;
  }

  async list(): Promise<AgentInfo[]> {
    const rows = await this.inTenant((tx) =>
      tx<AgentRow[]>`SELECT tenant_id, name, policy, created_at FROM agents
        WHERE tenant_id = ${this.tenant} ORDER BY name`
    );
    return rows.map(info);
  }

  async remove(name: string): Promise<boolean> {
    checkAgentName(name);
    // Through agent_remove(): the runtime's role has no table-wide DELETE.
    const [{ gone }] = await this.inTenant((tx) =>
      tx<{ gone: boolean }[]>`SELECT agent_remove(${name}) AS gone`
    );
    return gone;
  }
}

function info(row: AgentRow): AgentInfo {
  return {
    name: row.name,
    ...(row.policy !== null ? { policy: row.policy } : {}),
    createdAt: row.created_at,
  };
}
