/**
 * The stores of `omotai start`, behind their ports: the embedded SQLite file of the data dir
 * (the default: one tenant, no server), or a tenant of a shared PostgreSQL database
 * (`--database`, `OMOTAI_DATABASE_URL`), where the audit, the agent keys, the admin token, the
 * domain rules, the approvals and questions, the grants, the vault's ciphertexts, the console
 * logins, the live sessions and the capture leases are shared by every runtime of the tenant
 * (docs/deploy.md).
 * The data dir keeps what is the runtime's own: its checkpoint key, name, browsers.
 *
 * @module
 */
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import {
  type AgentStore,
  type AuditStore,
  type AuditWriter,
  CaptureLeases,
  type CaptureLeaseStore,
  databasePath,
  DEFAULT_TENANT,
  type DomainStore,
  type LiveSessionStore,
  MemoryLiveSessions,
  openDatabase,
  PgAdminToken,
  PgAgentStore,
  PgAuditLog,
  PgAuditSink,
  PgCaptureLeaseRows,
  PgDatabase,
  PgDecisionStore,
  PgDomainStore,
  PgGrantStore,
  PgLiveSessions,
  PgOperatorSessions,
  PgVaultRecords,
  SqliteAgentStore,
  SqliteAuditLog,
  sqliteAuditStore,
  SqliteCaptureLeaseRows,
  SqliteDomainStore,
  SqliteGrantStore,
  TENANT_ID,
} from "../store/mod.ts";
import { CHECKPOINT_FILE, Checkpointer, checkpointKeyIn, JsonlMirror } from "../audit/mod.ts";
import { log, OmotaiError } from "../mod.ts";
import { Grants } from "../grants/mod.ts";
import { egressSecrets, processRedactor } from "../redact/mod.ts";
import { keySourceFrom, type SecretInfo, Vault } from "../../vault/mod.ts";
import type { Teardown } from "./teardown.ts";

/** What `openStores` needs of the start's options. */
export interface StoreStartOptions {
  dataDir: string;
  /** JSONL file mirroring every audit row (`--audit`). */
  audit?: string;
  /** A PostgreSQL URL: the shared store (`--database`, `OMOTAI_DATABASE_URL`). */
  database?: string;
  /** The tenant this runtime serves (`--tenant`; the embedded store has `default` only). */
  tenant?: string;
  /** The vault key (in-process tests; else from the environment). */
  vaultKey?: { key?: string; passphrase?: string };
  /**
   * Tests: how long the tenant's admin token hash may go unread before every bearer is
   * refused (default `ADMIN_STALE_MS`, 30 s), so a test of an outage need not wait it out
   * (no flag sets it).
   */
  adminStaleMs?: number;
}

/** What only the shared store has. */
export interface SharedStores {
  db: PgDatabase;
  /** The tenant's approvals, on the decision board. */
  board: PgDecisionStore<"approval">;
  /** The tenant's `ask_human` questions and push challenges, on the decision board. */
  questions: PgDecisionStore<"question">;
  /** Console logins, valid on every runtime of the tenant. */
  operatorSessions: PgOperatorSessions;
  /** The tenant's admin token, checked by its hash (the console's and the API's credential). */
  admin: PgAdminToken;
  /** This runtime's name, as other runtimes' consoles show it. */
  runtime: string;
}

/** The stores a runtime works with, whichever database holds them. */
export interface Stores {
  /** The tenant everything here belongs to. */
  tenant: string;
  /** The data dir's SQLite file: grants and vault (and everything else when embedded). */
  db: DatabaseSync;
  vault: Vault | undefined;
  /** Where every audit row goes. */
  audit: AuditWriter;
  /** The audit chain, to read, verify and checkpoint. */
  auditStore: AuditStore;
  domains: DomainStore;
  agents: AgentStore;
  grants: Grants;
  /**
   * The capture leases: in the data dir's file (embedded), or the tenant's, shared by every
   * runtime of it (shared): one capture into a target at a time.
   */
  leases: CaptureLeaseStore;
  /**
   * The live sessions: this runtime's in memory (embedded), or the tenant's of every runtime
   * (shared); `cli/live_mirror.ts` writes this runtime's into either.
   */
  live: LiveSessionStore;
  /** The shared store's own parts; absent for the embedded one. */
  shared?: SharedStores;
  /** Whether the audit's store answers now (the console says so when it does not). */
  available(): boolean;
  /** Set once `runtime_started` is written: only then does the teardown write `runtime_stopped`. */
  lifecycle: { started: boolean };
  /**
   * The audit's end, as the teardown writes it (`runtime_stopped` once, the writer flushed,
   * the final checkpoint), for a shutdown whose teardown is stuck before those steps.
   */
  seal(): Promise<void>;
}

/**
 * Opens the stores; on the teardown as each is made: the databases' close, the vault's key,
 * the audit mirror and writer, the checkpoints, and the `runtime_stopped` row once the
 * runtime has started.
 */
export async function openStores(options: StoreStartOptions, teardown: Teardown): Promise<Stores> {
  await Deno.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const tenant = options.tenant ?? DEFAULT_TENANT;
  if (!TENANT_ID.test(tenant)) {
    throw new OmotaiError("BAD_TENANT", "a tenant id is 1-63 of a-z, 0-9, _ and -");
  }
  if (!options.database && tenant !== DEFAULT_TENANT) {
    throw new OmotaiError("BAD_TENANT", "the embedded database has one tenant: default");
  }
  const db = openDatabase(databasePath(options.dataDir));
  teardown.defer("database", () => db.close());
  const mirror = options.audit ? new JsonlMirror(options.audit) : undefined;
  if (mirror) teardown.defer("audit mirror", () => mirror[Symbol.dispose]());
  const runtime = await runtimeName(options.dataDir);
  const base = options.database
    ? await openShared(options.database, tenant, runtime, mirror, teardown, options.adminStaleMs)
    : embedded(db, mirror, runtime.name);
  // The vault opens here or not at all: a wrong key stops the start (VAULT_KEY_MISMATCH)
  // before anything serves, never at the first login, and every value is known to the
  // redactor before any page can echo it.
  const vault = await openVault(base.vaultRecords ?? db, options.vaultKey);
  if (vault) teardown.defer("vault key", () => vault[Symbol.dispose]());
  // Every minute and at the end (after the runtime_stopped row: registered before it), the
  // chain's head is signed with a key outside the database (docs/audit.md).
  const checkpoints = new Checkpointer({
    store: base.auditStore,
    key: await checkpointKeyIn(options.dataDir),
    runtime: runtime.name,
    file: join(options.dataDir, CHECKPOINT_FILE),
    log,
  });
  checkpoints.start();
  teardown.defer("audit checkpoints", () => checkpoints[Symbol.asyncDispose]());
  if (base.flush) teardown.defer("audit writer", base.flush);
  const lifecycle = { started: false };
  const audit = base.audit;
  let stopWritten = false;
  const stopRow = () => {
    if (!lifecycle.started || stopWritten) return;
    stopWritten = true;
    try {
      audit.append({ kind: "runtime_stopped", source: "lifecycle", decision: "event" });
    } catch { /* the database may be gone; nothing else to do */ }
  };
  teardown.defer("runtime_stopped row", stopRow);
  // The same three steps, in the teardown's order, for a teardown stuck before them.
  const seal = async () => {
    stopRow();
    await base.flush?.();
    await checkpoints[Symbol.asyncDispose]();
  };
  return {
    tenant,
    db,
    vault,
    audit,
    auditStore: base.auditStore,
    domains: base.domains,
    agents: base.agents,
    grants: base.grants,
    leases: base.leases,
    live: base.live,
    shared: base.shared,
    available: base.available,
    lifecycle,
    seal,
  };
}

type BaseStores =
  & Pick<
    Stores,
    "audit" | "auditStore" | "domains" | "agents" | "leases" | "live" | "available"
  >
  & {
    grants: Grants;
    /** Where the vault's ciphertexts are, when not in the data dir's file. */
    vaultRecords?: PgVaultRecords;
    shared?: SharedStores;
    /** Waits until every row written is kept (the teardown's). */
    flush?: () => Promise<void>;
  };

/** The embedded store: one SQLite file, one tenant. */
function embedded(db: DatabaseSync, mirror: JsonlMirror | undefined, runtime: string): BaseStores {
  const audit = new SqliteAuditLog(db, { redactor: processRedactor(), mirror });
  return {
    audit,
    auditStore: sqliteAuditStore(db, audit),
    domains: new SqliteDomainStore(db),
    agents: new SqliteAgentStore(db),
    grants: new Grants(new SqliteGrantStore(db), {
      audit,
      secrets: { has: (id) => Vault.has(db, id) },
    }),
    leases: new CaptureLeases(new SqliteCaptureLeaseRows(db), { runtime }),
    // One runtime: its sessions are all there is (nothing of a last run outlives its process).
    live: new MemoryLiveSessions({ name: runtime }),
    available: () => true,
  };
}

/** A tenant of the shared PostgreSQL store. */
async function openShared(
  url: string,
  tenant: string,
  runtime: { name: string; secret: string },
  mirror: JsonlMirror | undefined,
  teardown: Teardown,
  adminStaleMs: number | undefined,
): Promise<BaseStores> {
  const pg = await PgDatabase.open({ url });
  teardown.defer("shared database", () => pg[Symbol.asyncDispose]());
  // Reads, checkpoints and prunes; rows are appended by the writer below.
  const auditStore = new PgAuditLog(pg, tenant, { redactor: processRedactor() });
  // A tenant the owner never added: nothing of it exists, nothing starts (the runtime's
  // role cannot make one).
  await auditStore.head().catch((err) => {
    const code = (err as { code?: string }).code;
    throw code === "AUDIT_UNAVAILABLE" && /no tenant/.test((err as Error).message)
      ? new OmotaiError("TENANT_UNKNOWN", `no tenant ${tenant} in the database`)
      : err;
  });
  // No console without the tenant's admin token: made by the owner, never by a runtime.
  const admin = await PgAdminToken.open(pg, tenant, { staleMs: adminStaleMs });
  teardown.defer("tenant admin token", () => admin[Symbol.asyncDispose]());
  // The audit writer's own connection. It has one batch in flight at a time, so one is all
  // it needs; an action's row then never waits behind the pool's other queries, and every
  // append reaches the same warm server process (the pool hands out its idle connections in
  // turn, each one cold again by its next append). Closed after the writer's last flush.
  const writerPg = await PgDatabase.open({ url, max: 1 });
  teardown.defer("audit writer's connection", () => writerPg[Symbol.asyncDispose]());
  const writer = new PgAuditSink(
    new PgAuditLog(writerPg, tenant, { redactor: processRedactor(), mirror }),
  );
  const domains = await PgDomainStore.open(pg, tenant);
  teardown.defer("shared domain rules", () => domains[Symbol.asyncDispose]());
  const board = await PgDecisionStore.open(pg, tenant, "approval", { runtime: runtime.name });
  teardown.defer("shared approvals", () => board[Symbol.asyncDispose]());
  const questions = await PgDecisionStore.open(pg, tenant, "question", { runtime: runtime.name });
  teardown.defer("shared questions", () => questions[Symbol.asyncDispose]());
  const operatorSessions = new PgOperatorSessions(pg, tenant, {
    onError: (code) => log(`console sessions: ${code}`),
  });
  const vaultRecords = new PgVaultRecords(pg, tenant);
  const live = new PgLiveSessions(pg, runtime);
  // What this runtime's last run left: its browsers are gone, so are its sessions.
  const swept = await live.sweep();
  if (swept) log(`live sessions: ${swept} left by this runtime's last run removed`);
  return {
    audit: writer,
    auditStore,
    domains,
    agents: new PgAgentStore(pg, tenant),
    // A grant's change stands only once its row is kept (appendSoon), as an action's does;
    // whether its secret exists is the shared vault's answer (no key needed for that).
    grants: new Grants(new PgGrantStore(pg, tenant), {
      audit: { append: (e) => writer.appendSoon(e) },
      secrets: { has: (id) => Vault.has(vaultRecords, id) },
    }),
    vaultRecords,
    leases: new CaptureLeases(new PgCaptureLeaseRows(pg, tenant), { runtime: runtime.name }),
    live,
    shared: { db: pg, board, questions, operatorSessions, admin, runtime: runtime.name },
    // The console's word: rows cannot be kept, or the rules are too old to judge by.
    available: () => writer.healthy && readable(domains),
    flush: () => writer[Symbol.asyncDispose](),
  };
}

/** Whether the rules can be judged by now (`DOMAINS_UNREADABLE` once too old). */
function readable(domains: DomainStore): boolean {
  try {
    domains.current();
    return true;
  } catch {
    return false;
  }
}

/**
 * This runtime's name and secret, kept in its data dir (0600) so that its next start knows
 * the sessions it left: the database knows a runtime by the secret's hash only.
 */
async function runtimeName(dataDir: string): Promise<{ name: string; secret: string }> {
  const file = join(dataDir, "runtime-secret");
  let secret: string;
  try {
    secret = (await Deno.readTextFile(file)).trim();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    secret = crypto.randomUUID() + crypto.randomUUID();
    await Deno.writeTextFile(file, secret + "\n", { mode: 0o600, createNew: true });
  }
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`omotai-runtime\n${secret}`)),
  );
  const id = [...digest.slice(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return { name: `runtime-${id}`, secret };
}

/**
 * The vault, when `OMOTAI_VAULT_KEY` or `OMOTAI_VAULT_PASSPHRASE` is set; its values go into
 * the process redactor at once.
 */
async function openVault(
  db: DatabaseSync | PgVaultRecords,
  given?: { key?: string; passphrase?: string },
): Promise<Vault | undefined> {
  const key = given ? given.key : Deno.env.get("OMOTAI_VAULT_KEY");
  const passphrase = given ? given.passphrase : Deno.env.get("OMOTAI_VAULT_PASSPHRASE");
  if (!key && !passphrase) return undefined;
  // Secrets another runtime of the tenant adds are known to this one's redactor within a
  // refresh of the shared vault, before any login can use them here.
  const opened: { vault?: Vault } = {};
  const learn = async (secrets: readonly SecretInfo[]) => {
    for (const s of secrets) {
      const value = await opened.vault!.reveal(s.id);
      // A username is blanked whole, not by its pieces (an e-mail's domain is ordinary
      // text), and may be in a signed-in site's own URLs; every other value leaves only in
      // a login.
      processRedactor().add([value], { wholeOnly: s.kind === "username" });
      if (s.kind !== "username") egressSecrets().add([value]);
    }
  };
  const vault = opened.vault = await Vault.open(
    db,
    keySourceFrom({ key, passphrase }, {
      key: "OMOTAI_VAULT_KEY",
      passphrase: "OMOTAI_VAULT_PASSPHRASE",
    }),
    {
      onNewSecrets: (secrets) =>
        void learn(secrets).catch((err) =>
          log(
            `vault: a new secret could not be read (${(err as { code?: string }).code ?? "ERROR"})`,
          )
        ),
    },
  );
  await learn(vault.list());
  return vault;
}
