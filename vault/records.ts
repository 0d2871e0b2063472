/**
 * Where a vault keeps what it seals: the storage port {@link VaultRecords} and its SQLite
 * implementation, {@link SqliteVaultRecords} (two tables of the runtime's database file). A
 * shared store implements the same port elsewhere (PostgreSQL:
 * `runtime/store/pg_vault_records.ts`); the vault itself imports no store.
 *
 * A store holds only what is safe to hold: the meta values (format, salt, key-check value, key
 * source) and each secret's id, kind, times and sealed bytes. It never sees a key or a value,
 * so nothing it logs, throws or keeps can carry one.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";

/** A vault's meta values: one set per vault (per tenant in a shared store). */
export interface VaultMeta {
  /** The sealed format's version, as text (`SEAL_VERSION`). */
  format: string;
  /** The passphrase salt, base64 (stored for a raw key too, so a later passphrase has one). */
  salt: string;
  /** The key-check value, base64: the seal of a fixed label under the vault's key. */
  check?: string;
  /** How the key that made `check` was given (`raw` or `passphrase`), for error hints. */
  keySource?: string;
}

/** What a store keeps of a secret, apart from its sealed bytes. */
export interface SecretRecord {
  id: string;
  kind: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601; null until first revealed. */
  lastUsedAt: string | null;
}

/** A secret as stored: its record and its sealed bytes (never a value). */
export interface SealedRecord extends SecretRecord {
  sealed: Uint8Array;
}

/**
 * What {@link VaultRecords.put} did: `added`; `taken` (the id exists); `rekeyed` (the stored
 * key-check value is no longer the one the caller sealed under: nothing was written).
 */
export type PutOutcome = "added" | "taken" | "rekeyed";

/** A rekey's write: applied only if the store still holds exactly what was resealed. */
export interface Rekeying {
  /** What the vault read and resealed: the key-check value and every secret, by id. */
  expect: {
    check: string;
    records: readonly Pick<SealedRecord, "id" | "kind" | "sealed">[];
  };
  /** The new meta values and each secret's new sealed bytes. */
  next: {
    salt: string;
    check: string;
    keySource: string;
    sealed: readonly { id: string; sealed: Uint8Array }[];
  };
}

/**
 * The vault's storage port. Every method is one transaction of the store; a failure rejects
 * (the vault reports it as `VAULT_UNREADABLE`). Lists are ordered by id, byte order.
 */
export interface VaultRecords {
  /** The vault's meta values; undefined when the vault was never opened in this store. */
  meta(): Promise<VaultMeta | undefined>;
  /**
   * Stores each of `meta`'s values the store does not hold yet (the first writer wins:
   * `format` and `salt` together, then `check` and `keySource` together) and returns what the
   * store holds afterwards, which may be another opener's.
   */
  insertMetaIfMissing(meta: VaultMeta): Promise<VaultMeta>;
  /** One secret with its sealed bytes; undefined when there is none. */
  get(id: string): Promise<SealedRecord | undefined>;
  /** Every secret's record (no sealed bytes), by id. */
  list(): Promise<SecretRecord[]>;
  /** Every secret with its sealed bytes, by id (for a rekey). */
  listSealed(): Promise<SealedRecord[]>;
  /**
   * Adds `record` if its id is free and the stored key-check value is still `check` (the
   * key `record` was sealed under); see {@link PutOutcome}. Atomic insert-if-absent: never
   * overwrites, and of two concurrent puts of one id (from any connection) exactly one is
   * `added`, the other `taken`.
   */
  put(record: SealedRecord, check: string): Promise<PutOutcome>;
  /** Sets a secret's `lastUsedAt` (no secret: nothing). */
  touch(id: string, at: string): Promise<void>;
  /** Deletes a secret; false when there was none. */
  delete(id: string): Promise<boolean>;
  /**
   * A rekey's compare-and-swap: if the stored key-check value and secrets (ids, kinds,
   * sealed bytes) are exactly `change.expect`, writes every new sealed value and the new salt,
   * check and key source, all at once, and returns true; else writes nothing, returns false.
   */
  replaceAll(change: Rekeying): Promise<boolean>;
  /**
   * Optional, for a store that answers at once (SQLite): every secret's record, read now.
   * A vault over such a store answers `list()` and `has()` from it (always current); over
   * any other, from an index it keeps fresh (`Vault.refresh`).
   */
  listNow?(): SecretRecord[];
  /** Optional, with `listNow`: whether a secret `id` exists, read now. */
  hasNow?(id: string): boolean;
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS vault_meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  CREATE TABLE IF NOT EXISTS vault_secrets (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    sealed BLOB NOT NULL,
    created_at TEXT NOT NULL,
    last_used_at TEXT
  );
`;

/** The meta values' names in `vault_meta`. */
const META_NAMES = {
  format: "format",
  salt: "salt",
  check: "check",
  keySource: "key_source",
} as const satisfies Record<keyof VaultMeta, string>;

interface Row {
  id: string;
  kind: string;
  sealed: Uint8Array;
  created_at: string;
  last_used_at: string | null;
}

/**
 * The vault's records in a SQLite database: `vault_meta(name, value)` and
 * `vault_secrets(id, kind, sealed, created_at, last_used_at)`, created at the first write. The
 * database stays the caller's (this never closes it).
 */
export class SqliteVaultRecords implements VaultRecords {
  readonly #db: DatabaseSync;
  #tables = false;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  meta(): Promise<VaultMeta | undefined> {
    return later(() => this.#exists() ? this.#meta() : undefined);
  }

  insertMetaIfMissing(meta: VaultMeta): Promise<VaultMeta> {
    return later(() => {
      this.#create();
      transaction(this.#db, () => {
        const insert = this.#db.prepare(
          "INSERT OR IGNORE INTO vault_meta (name, value) VALUES (?, ?)",
        );
        for (const [field, name] of Object.entries(META_NAMES)) {
          const value = meta[field as keyof VaultMeta];
          if (value !== undefined) insert.run(name, value);
        }
      });
      return this.#meta()!;
    });
  }

  get(id: string): Promise<SealedRecord | undefined> {
    return later(() => {
      if (!this.#exists()) return undefined;
      const row = this.#db.prepare(
        "SELECT id, kind, sealed, created_at, last_used_at FROM vault_secrets WHERE id = ?",
      ).get(id) as Row | undefined;
      return row && sealedRecord(row);
    });
  }

  list(): Promise<SecretRecord[]> {
    return later(() => this.listNow());
  }

  listSealed(): Promise<SealedRecord[]> {
    return later(() => this.#sealedRows().map(sealedRecord));
  }

  put(record: SealedRecord, check: string): Promise<PutOutcome> {
    return later(() => {
      this.#create();
      return transaction(this.#db, () => {
        if (this.#value("check") !== check) return "rekeyed";
        const res = this.#db.prepare(
          `INSERT INTO vault_secrets (id, kind, sealed, created_at, last_used_at)
           VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
        ).run(record.id, record.kind, record.sealed, record.createdAt, record.lastUsedAt);
        return Number(res.changes) > 0 ? "added" : "taken";
      });
    });
  }

  touch(id: string, at: string): Promise<void> {
    return later(() => {
      if (!this.#exists()) return;
      this.#db.prepare("UPDATE vault_secrets SET last_used_at = ? WHERE id = ?").run(at, id);
    });
  }

  delete(id: string): Promise<boolean> {
    return later(() => {
      if (!this.#exists()) return false;
      const res = this.#db.prepare("DELETE FROM vault_secrets WHERE id = ?").run(id);
      return Number(res.changes) > 0;
    });
  }

  replaceAll(change: Rekeying): Promise<boolean> {
    return later(() => {
      this.#create();
      return transaction(this.#db, () => {
        if (this.#value("check") !== change.expect.check) return false;
        if (!sameRecords(this.#sealedRows(), change.expect.records)) return false;
        const update = this.#db.prepare("UPDATE vault_secrets SET sealed = ? WHERE id = ?");
        for (const r of change.next.sealed) update.run(r.sealed, r.id);
        const set = this.#db.prepare(
          "INSERT OR REPLACE INTO vault_meta (name, value) VALUES (?, ?)",
        );
        set.run(META_NAMES.salt, change.next.salt);
        set.run(META_NAMES.check, change.next.check);
        set.run(META_NAMES.keySource, change.next.keySource);
        return true;
      });
    });
  }

  listNow(): SecretRecord[] {
    if (!this.#exists()) return [];
    const rows = this.#db.prepare(
      "SELECT id, kind, created_at, last_used_at FROM vault_secrets ORDER BY id",
    ).all() as unknown as Omit<Row, "sealed">[];
    return rows.map(record);
  }

  hasNow(id: string): boolean {
    if (!this.#exists()) return false;
    return this.#db.prepare("SELECT 1 FROM vault_secrets WHERE id = ?").get(id) !== undefined;
  }

  /** Whether the vault's tables exist (no tables: an empty vault, nothing created). */
  #exists(): boolean {
    if (this.#tables) return true;
    const found = this.#db.prepare(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('vault_meta', 'vault_secrets')",
    ).get() as { n: number };
    this.#tables = Number(found.n) === 2;
    return this.#tables;
  }

  #create(): void {
    if (this.#tables) return;
    this.#db.exec(SCHEMA);
    this.#tables = true;
  }

  #value(name: string): string | undefined {
    const row = this.#db.prepare("SELECT value FROM vault_meta WHERE name = ?").get(name) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  #meta(): VaultMeta | undefined {
    const format = this.#value(META_NAMES.format);
    const salt = this.#value(META_NAMES.salt);
    if (format === undefined || salt === undefined) return undefined;
    const meta: VaultMeta = { format, salt };
    const check = this.#value(META_NAMES.check);
    const keySource = this.#value(META_NAMES.keySource);
    if (check !== undefined) meta.check = check;
    if (keySource !== undefined) meta.keySource = keySource;
    return meta;
  }

  #sealedRows(): Row[] {
    if (!this.#exists()) return [];
    return this.#db.prepare(
      "SELECT id, kind, sealed, created_at, last_used_at FROM vault_secrets ORDER BY id",
    ).all() as unknown as Row[];
  }
}

/**
 * Whether `records` (read now) are exactly `expected`: the same ids, kinds and sealed bytes,
 * in the same order. A rekey's store checks this before it writes.
 */
export function sameRecords(
  records: readonly Pick<SealedRecord, "id" | "kind" | "sealed">[],
  expected: readonly Pick<SealedRecord, "id" | "kind" | "sealed">[],
): boolean {
  return records.length === expected.length &&
    records.every((r, i) =>
      r.id === expected[i].id && r.kind === expected[i].kind &&
      equalBytes(r.sealed, expected[i].sealed)
    );
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function record(row: Omit<Row, "sealed">): SecretRecord {
  return {
    id: row.id,
    kind: row.kind,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

function sealedRecord(row: Row): SealedRecord {
  return { ...record(row), sealed: new Uint8Array(row.sealed) };
}

function transaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const out = fn();
    db.exec("COMMIT");
    return out;
  } catch (err) {
    db.exec("ROLLBACK");
    throw err;
  }
}

/** `fn()`'s value as a promise; a throw becomes a rejection (the port is asynchronous). */
function later<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}
