/**
 * Agent keys as a port: add, verify, list and remove one tenant's agents, the same way
 * whichever database holds them, and the rules every adapter keeps: what a name, a key and a
 * policy path must be, and that only a key's SHA-256 is stored. A key is the credential an
 * MCP client presents (`Authorization: Bearer omk_…`), shown once when it is made (`omotai
 * agent add`), so the database opens no door. `SqliteAgentStore` (`sqlite_agent_store.ts`) is
 * the embedded default (one tenant); `PgAgentStore` (`pg_agent_store.ts`) keeps every
 * tenant's in PostgreSQL. One contract suite (`agent_store_contract_test.ts`) runs against
 * both.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { isAbsolute } from "node:path";
import { OmotaiError } from "../mod.ts";

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
export class AgentKeyError extends OmotaiError<AgentKeyErrorCode> {}

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

/** A new agent key: 32 random bytes, `omk_` + base64url. */
function newAgentKey(): string {
  return AGENT_KEY_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32)))
    .toString("base64url");
}

/** What is stored of a key: its SHA-256, hex. */
export function agentKeyHash(key: string): string {
  return keyDigest(key).toString("hex");
}

/** Throws `BAD_POLICY_PATH` or `POLICY_UNREADABLE` unless `path` is an absolute, readable file. */
function checkPolicyFile(path: string): void {
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

/** A new agent, checked and keyed: what an adapter's `add` stores and returns. */
export interface AgentDraft {
  /** The agent and its key, returned once. */
  readonly agent: NewAgent;
  /** What is stored of the key (`agentKeyHash`). */
  readonly keyHash: string;
  /** The policy path, or null for the runtime's `--policy`. */
  readonly policy: string | null;
}

/**
 * Checks a new agent's name and policy file and makes its key: the start of every adapter's
 * `add`. Throws `BAD_AGENT_NAME`, `BAD_POLICY_PATH` or `POLICY_UNREADABLE`.
 */
export function draftAgent(name: string, policy?: string): AgentDraft {
  checkAgentName(name);
  if (policy !== undefined) checkPolicyFile(policy);
  const key = newAgentKey();
  return { agent: { name, key }, keyHash: agentKeyHash(key), policy: policy ?? null };
}

/** The refusal of a name the tenant has already (`AGENT_EXISTS`). */
export function agentExists(name: string): AgentKeyError {
  return new AgentKeyError("AGENT_EXISTS", `an agent named "${name}" exists; remove it first`);
}

/** A key's SHA-256 (what `agentKeyHash` writes as hex; what the embedded store compares). */
export function keyDigest(text: string): Buffer {
  return createHash("sha256").update(text, "utf8").digest();
}
