/**
 * Agent keys: the credential an MCP client presents (`Authorization: Bearer omk_…`). A key is
 * shown once when it is made (`omotai agent add`) and stored only as its SHA-256, so the
 * database file opens no door. The table is reread whenever SQLite's change counter moves, so
 * a key removed by another process stops verifying at the next request.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash, timingSafeEqual } from "node:crypto";
import { isAbsolute } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { OmotaiError } from "../errors.ts";

/** What an agent name must look like: lower case, digits, `_` and `-`, at most 64 long. */
export const AGENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Prefix of every agent key, so a leaked one is recognizable (secret scanners, logs). */
export const AGENT_KEY_PREFIX = "omk_";

/** One agent, as the runtime and `omotai agent list` see it (never its key or hash). */
export interface AgentInfo {
  readonly name: string;
  /** Absolute path of the agent's policy file; absent: the runtime's `--policy`. */
  readonly policy?: string;
  /** ISO time the agent was added. */
  readonly createdAt: string;
}

/** A freshly made agent and its key: the only time the key exists outside the client. */
export interface NewAgent {
  readonly name: string;
  readonly key: string;
}

/** Codes of `AgentKeyError`. */
export type AgentKeyErrorCode =
  | "BAD_AGENT_NAME"
  | "AGENT_EXISTS"
  | "BAD_POLICY_PATH"
  | "POLICY_UNREADABLE"
  | "AGENTS_UNREADABLE";

/** A refused agent operation; its message never carries a key. */
export class AgentKeyError extends OmotaiError<AgentKeyErrorCode> {
  constructor(code: AgentKeyErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
  }
}

/** Throws `BAD_AGENT_NAME` unless `name` matches `AGENT_NAME`. */
export function checkAgentName(name: string): string {
  if (!AGENT_NAME.test(name)) {
    throw new AgentKeyError(
      "BAD_AGENT_NAME",
      `"${
        name.slice(0, 80)
      }" is not an agent name (a-z, 0-9, _ and -, starting with a letter or digit, at most 64)`,
    );
  }
  return name;
}

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

/** Reads and writes the `agents` table. */
export class AgentKeys {
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
  add(name: string, policy?: string): NewAgent {
    checkAgentName(name);
    if (policy !== undefined) checkPolicyFile(policy);
    const key = newAgentKey();
    const exists = () =>
      new AgentKeyError("AGENT_EXISTS", `an agent named "${name}" exists; remove it first`);
    if (this.#db.prepare("SELECT 1 FROM agents WHERE name = ?").get(name)) throw exists();
    try {
      this.#db.prepare(
        "INSERT INTO agents (name, key_hash, policy, created_at) VALUES (?, ?, ?, ?)",
      ).run(name, agentKeyHash(key), policy ?? null, new Date().toISOString());
    } catch (err) {
      // Another process added the same name between the check and the insert.
      if (/UNIQUE constraint failed: agents\.name/.test((err as Error).message)) throw exists();
      throw err;
    } finally {
      this.#localWrites++;
    }
    return { name, key };
  }

  /**
   * The agent whose key `key` is, or undefined. Every stored hash is compared in constant
   * time, all of them, whether or not one matched already: how long it takes says nothing
   * about which key (or how much of one) was right. Throws `AGENTS_UNREADABLE`.
   */
  verify(key: string): AgentInfo | undefined {
    const entries = this.#current();
    const probe = sha256(key);
    let found: AgentInfo | undefined;
    for (const entry of entries) {
      const same = timingSafeEqual(entry.hash, probe);
      found = same ? entry.info : found;
    }
    return found;
  }

  /** Every agent, by name (no keys, no hashes). Throws `AGENTS_UNREADABLE`. */
  list(): AgentInfo[] {
    return this.#current().map((e) => e.info);
  }

  /** Removes the agent `name` (its key stops verifying); false when there was none. */
  remove(name: string): boolean {
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

/** A new agent key: 32 random bytes, `omk_` + base64url. */
export function newAgentKey(): string {
  return AGENT_KEY_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32)))
    .toString("base64url");
}

/** What is stored of a key: its SHA-256, hex. */
export function agentKeyHash(key: string): string {
  return sha256(key).toString("hex");
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}

/** A stored hash as 32 bytes; a damaged one compares unequal to every key (all ones). */
function hashBytes(hex: string): Uint8Array {
  const bytes = /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, "hex") : undefined;
  return bytes ?? new Uint8Array(32).fill(0xff);
}

/** Throws `BAD_POLICY_PATH` or `POLICY_UNREADABLE` unless `path` is an absolute, readable file. */
export function checkPolicyFile(path: string): void {
  if (!isAbsolute(path)) {
    throw new AgentKeyError("BAD_POLICY_PATH", `the policy path ${path} is not absolute`);
  }
  let isFile: boolean;
  try {
    isFile = Deno.statSync(path).isFile;
    if (isFile) Deno.openSync(path, { read: true }).close();
  } catch (err) {
    throw new AgentKeyError(
      "POLICY_UNREADABLE",
      `the policy file ${path} cannot be read: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (!isFile) throw new AgentKeyError("BAD_POLICY_PATH", `${path} is not a file`);
}
