/**
 * The embedded `AgentStore`: the `agents` table of the SQLite file, one tenant. The table is
 * reread whenever SQLite's change counter moves, so a key removed by another process stops
 * verifying at the next request.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { timingSafeEqual } from "node:crypto";
import type { DatabaseSync } from "node:sqlite";
import {
  agentExists,
  type AgentInfo,
  AgentKeyError,
  type AgentStore,
  checkAgentName,
  draftAgent,
  keyDigest,
  type NewAgent,
  type TenantAgent,
} from "./agent_store.ts";
import { asPromise } from "./as_promise.ts";
import { DEFAULT_TENANT } from "./tenant.ts";

interface AgentRow {
  name: string;
  key_hash: string;
  policy: string | null;
  created_at: string;
}

interface Entry {
  info: AgentInfo;
  hash: Uint8Array;
}

/** Reads and writes the `agents` table of the embedded database. */
export class SqliteAgentStore implements AgentStore {
  /** The embedded database's one tenant. */
  readonly tenant: string = DEFAULT_TENANT;
  #db: DatabaseSync;
  #seen: number | undefined;
  #localWrites = 0;
  #seenLocal = -1;
  #fingerprint: string | undefined;
  #generation = 0;
  #entries: readonly Entry[] = [];

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Adds an agent and returns its key (32 random bytes, `omk_` + base64url), which is not
   * kept: only its SHA-256 is stored. `policy` must be an absolute path to a readable file.
   * Throws `BAD_AGENT_NAME`, `AGENT_EXISTS`, `BAD_POLICY_PATH` or `POLICY_UNREADABLE`.
   */
  add(name: string, policy?: string): Promise<NewAgent> {
    return asPromise(() => this.#add(name, policy));
  }

  /**
   * The agent whose key `key` is, or undefined. Every stored hash is compared in constant
   * time, all of them, whether or not one matched already: how long it takes says nothing
   * about which key (or how much of one) was right. Rejects with `AGENTS_UNREADABLE`.
   */
  verify(key: string): Promise<TenantAgent | undefined> {
    return asPromise(() => {
      const info = this.#verify(key);
      return info ? { ...info, tenant: this.tenant } : undefined;
    });
  }

  /** Every agent, by name (no keys, no hashes). Rejects with `AGENTS_UNREADABLE`. */
  list(): Promise<AgentInfo[]> {
    return asPromise(() => this.#current().map((e) => e.info));
  }

  /** Removes the agent `name` (its key stops verifying); false when there was none. */
  remove(name: string): Promise<boolean> {
    return asPromise(() => this.#remove(name));
  }

  #add(name: string, policy?: string): NewAgent {
    const draft = draftAgent(name, policy);
    if (this.#db.prepare("SELECT 1 FROM agents WHERE name = ?").get(name)) throw agentExists(name);
    try {
      this.#db.prepare(
        "INSERT INTO agents (name, key_hash, policy, created_at) VALUES (?, ?, ?, ?)",
      ).run(name, draft.keyHash, draft.policy, new Date().toISOString());
    } catch (err) {
      // Another process added the same name between the check and the insert.
      if (/UNIQUE constraint failed: agents\.name/.test((err as Error).message)) {
        throw agentExists(name);
      }
      throw err;
    } finally {
      this.#localWrites++;
    }
    return draft.agent;
  }

  #verify(key: string): AgentInfo | undefined {
    const entries = this.#current();
    const probe = keyDigest(key);
    let found: AgentInfo | undefined;
    for (const entry of entries) {
      const same = timingSafeEqual(entry.hash, probe);
      found = same ? entry.info : found;
    }
    return found;
  }

  #remove(name: string): boolean {
    checkAgentName(name);
    try {
      const result = this.#db.prepare("DELETE FROM agents WHERE name = ?").run(name);
      return Number(result.changes) > 0;
    } finally {
      this.#localWrites++;
    }
  }

  /**
   * A number that changes whenever the agents changed, through this connection or any
   * other (another process's `omotai agent rm`), so the runtime can close the sessions of a
   * removed agent. Throws `AGENTS_UNREADABLE`.
   */
  generation(): number {
    this.#current();
    return this.#generation;
  }

  /** The agents; rereads only when some connection changed the database. */
  #current(): readonly Entry[] {
    try {
      const { data_version: version } = this.#db.prepare("PRAGMA data_version").get() as {
        data_version: number;
      };
      if (version === this.#seen && this.#localWrites === this.#seenLocal) return this.#entries;
      const rows = this.#db.prepare(
        "SELECT name, key_hash, policy, created_at FROM agents ORDER BY name",
      ).all() as unknown as AgentRow[];
      // data_version moves on any commit (audit rows of another runtime, domain rules):
      // the generation moves only when the agents themselves did.
      const fingerprint = rows.map((r) =>
        [r.name, r.key_hash, r.policy ?? "", r.created_at].join("\0")
      ).join("\n");
      if (fingerprint !== this.#fingerprint) {
        this.#fingerprint = fingerprint;
        this.#generation++;
        this.#entries = rows.map((r) => ({
          info: Object.freeze({
            name: r.name,
            ...(r.policy !== null ? { policy: r.policy } : {}),
            createdAt: r.created_at,
          }),
          hash: hashBytes(r.key_hash),
        }));
      }
      this.#seen = version;
      this.#seenLocal = this.#localWrites;
      return this.#entries;
    } catch (err) {
      throw new AgentKeyError(
        "AGENTS_UNREADABLE",
        `the agents cannot be read: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
}

/** A stored hash as 32 bytes; a damaged one compares unequal to every key (all ones). */
function hashBytes(hex: string): Uint8Array {
  const bytes = /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, "hex") : undefined;
  return bytes ?? new Uint8Array(32).fill(0xff);
}
