/**
 * The runtime's SQLite database (`runs/omotai.db`, `OMOTAI_DB` overrides): the audit log,
 * the dynamic domain rules, the agents' key hashes, the grants and the capture leases. Opened
 * in WAL mode so the CLI can change domain rules, agents and grants while a runtime reads them;
 * schema changes are numbered migrations tracked in `user_version`.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { OmotaiError } from "../mod.ts";

/** Migrations, applied in order; index + 1 is the schema version they lead to. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    ts TEXT NOT NULL,
    session TEXT,
    agent TEXT,
    kind TEXT NOT NULL,
    source TEXT NOT NULL,
    origin TEXT,
    method TEXT,
    decision TEXT NOT NULL,
    reason TEXT,
    module TEXT,
    rule TEXT,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
  );
  CREATE INDEX audit_ts ON audit(ts);
  -- One row: the chain's head (kept by a trigger) and, after a prune, the anchor the
  -- remaining rows chain from. 'pruning' opens the delete trigger for one transaction.
  CREATE TABLE audit_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    head_seq INTEGER NOT NULL,
    head_hash TEXT NOT NULL,
    anchor_seq INTEGER NOT NULL,
    anchor_hash TEXT NOT NULL,
    pruning INTEGER NOT NULL
  );
  INSERT INTO audit_state VALUES (1, 0, '${"0".repeat(64)}', 1, '${"0".repeat(64)}', 0);
  CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'AUDIT_APPEND_ONLY: audit rows cannot be changed'); END;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    WHEN (SELECT pruning FROM audit_state WHERE id = 1) != 1
    BEGIN SELECT RAISE(ABORT, 'AUDIT_APPEND_ONLY: audit rows are removed only by omotai audit prune'); END;
  CREATE TRIGGER audit_track_head AFTER INSERT ON audit
    BEGIN UPDATE audit_state SET head_seq = NEW.seq, head_hash = NEW.hash WHERE id = 1; END;

  CREATE TABLE domain_rules (
    origin TEXT PRIMARY KEY,
    rule TEXT NOT NULL CHECK (rule IN ('allow', 'deny')),
    added_at TEXT NOT NULL
  );
  `,
  // Agent keys: only the SHA-256 of a key is kept, so a copied database opens no door.
  `
  CREATE TABLE agents (
    name TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL UNIQUE,
    policy TEXT,
    created_at TEXT NOT NULL
  );
  `,
  // Grants (runtime/grants): a vault secret bound to an agent, a mode, an expiry and uses.
  // No foreign key to vault_secrets: the vault creates its tables itself, after migrations;
  // removing a secret revokes its grants in code (omotai secret rm) and at redemption.
  // Rows are revoked, never deleted, so a grant's id keeps meaning one grant in the audit.
  `
  CREATE TABLE grants (
    id TEXT PRIMARY KEY,
    secret_id TEXT NOT NULL,
    agent TEXT NOT NULL,
    purpose TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('once', 'session', 'standing')),
    uses TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    approved_at TEXT,
    approved_by TEXT,
    revoked_at TEXT,
    revoked_by TEXT,
    revoke_reason TEXT,
    session_id TEXT,
    used_at TEXT,
    last_redeemed_at TEXT,
    redemptions INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX grants_secret ON grants(secret_id);
  CREATE INDEX grants_agent ON grants(agent);
  `,
  // Signed checkpoints of the audit chain (runtime/audit/checkpoint.ts), append-only.
  `
  CREATE TABLE audit_checkpoints (
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL,
    ts TEXT NOT NULL,
    runtime TEXT NOT NULL,
    key_id TEXT NOT NULL,
    sig TEXT NOT NULL,
    PRIMARY KEY (seq, runtime, ts)
  );
  CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
    BEGIN SELECT RAISE(ABORT, 'AUDIT_APPEND_ONLY: checkpoints cannot be changed'); END;
  CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
    BEGIN SELECT RAISE(ABORT, 'AUDIT_APPEND_ONLY: checkpoints cannot be removed'); END;
  `,
  // Capture leases (runtime/store/sqlite_capture_leases.ts): a row per target secret id a
  // running capture will write, until its holder releases it or it expires (ms since epoch).
  `
  CREATE TABLE capture_leases (
    target TEXT PRIMARY KEY,
    token TEXT NOT NULL,
    holder TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX capture_leases_token ON capture_leases(token);
  `,
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Where the database lives: `OMOTAI_DB`, else `<dataDir>/omotai.db`. */
export function databasePath(dataDir: string): string {
  return Deno.env.get("OMOTAI_DB") || join(dataDir, "omotai.db");
}

/** Opens (creating and migrating as needed) the database at `path`. */
export function openDatabase(path: string): DatabaseSync {
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
  } catch (err) {
    throw new OmotaiError("DB_UNAVAILABLE", `cannot open ${path}: ${(err as Error).message}`);
  }
  try {
    db.exec("PRAGMA busy_timeout = 2000");
    db.exec("PRAGMA journal_mode = WAL");
    // WAL + NORMAL: a commit survives a process crash; only a power loss may drop the tail.
    db.exec("PRAGMA synchronous = NORMAL");
    migrate(db);
  } catch (err) {
    db.close();
    if (err instanceof OmotaiError) throw err;
    throw new OmotaiError("DB_UNAVAILABLE", `cannot prepare ${path}: ${(err as Error).message}`);
  }
  return db;
}

function migrate(db: DatabaseSync): void {
  const row = db.prepare("PRAGMA user_version").get() as { user_version: number };
  const current = row.user_version;
  if (current > SCHEMA_VERSION) {
    throw new OmotaiError(
      "DB_TOO_NEW",
      `the database has schema ${current}; this build knows up to ${SCHEMA_VERSION}`,
    );
  }
  for (let v = current; v < SCHEMA_VERSION; v++) {
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(MIGRATIONS[v]);
      db.exec(`PRAGMA user_version = ${v + 1}`);
      db.exec("COMMIT");
    } catch (err) {
      db.exec("ROLLBACK");
      throw err;
    }
  }
}
