/**
 * The vault: secrets sealed one by one (AES-256-GCM, bound to id and kind) in two tables of
 * the caller's SQLite database. `Vault.open` creates the tables when missing and checks the
 * key against the stored key-check value, so a wrong key fails there with
 * `VAULT_KEY_MISMATCH`, never at first use. No value is ever stored, returned by `list()`,
 * logged or put in an error message; `reveal()` is for the runtime only.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { VaultError } from "./errors.ts";
import { keyMatches, makeKeyCheck, resolveKey, SALT_BYTES, type VaultKeySource } from "./key.ts";
import { open, seal, SEAL_VERSION, secretAad } from "./seal.ts";

/** The kinds of secret the vault holds. */
export const SECRET_KINDS = ["password", "username", "totp", "generic"] as const;
/** One kind of secret. */
export type SecretKind = typeof SECRET_KINDS[number];

/** What a secret id must look like. */
export const SECRET_ID_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** What `list()` shows of a secret: never its value. */
export interface SecretInfo {
  id: string;
  kind: SecretKind;
  createdAt: string;
  lastUsedAt: string | null;
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

const REKEY_ATTEMPTS = 3;

interface Row {
  id: string;
  kind: string;
  sealed: Uint8Array;
}

/** Encrypted secrets in a SQLite database. Dispose to drop the key; the database stays open. */
export class Vault implements Disposable {
  #db: DatabaseSync;
  #key: CryptoKey | undefined;
  #check: string;

  private constructor(db: DatabaseSync, key: CryptoKey, check: string) {
    this.#db = db;
    this.#key = key;
    this.#check = check;
  }

  /**
   * Opens the vault in `db` with `source`, creating its tables when missing. The first open
   * stores the salt and the key-check value; every later one must match it
   * (`VAULT_KEY_MISMATCH`).
   */
  static async open(db: DatabaseSync, source: VaultKeySource): Promise<Vault> {
    guard(() => {
      db.exec(SCHEMA);
      transaction(db, () => {
        const format = meta(db, "format");
        if (format !== undefined && format !== String(SEAL_VERSION)) {
          throw new VaultError("VAULT_UNREADABLE", `the vault has format ${format}`);
        }
        insertMetaIfMissing(db, "format", String(SEAL_VERSION));
        insertMetaIfMissing(db, "salt", toBase64(randomSalt()));
      });
    });
    const salt = fromBase64(guard(() => meta(db, "salt"))!);
    const key = await resolveKey(source, salt);
    if (guard(() => meta(db, "check")) === undefined) {
      const check = toBase64(await makeKeyCheck(key));
      guard(() =>
        transaction(db, () => {
          insertMetaIfMissing(db, "check", check);
          insertMetaIfMissing(db, "key_source", source.type);
        })
      );
    }
    // Read back: another process may have set the vault up first, with another key.
    const check = guard(() => meta(db, "check"))!;
    if (!(await keyMatches(key, fromBase64(check)))) throw mismatch(db);
    return new Vault(db, key, check);
  }

  /**
   * Whether `db`'s vault holds a secret `id` (no vault tables: none). Needs no key: only the
   * id is looked at, so stores that refer to secrets (grants) ask here, not the table.
   */
  static has(db: DatabaseSync, id: string): boolean {
    const table = db.prepare(
      "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vault_secrets'",
    ).get();
    if (!table) return false;
    return db.prepare("SELECT 1 FROM vault_secrets WHERE id = ?").get(id) !== undefined;
  }

  /** Whether this vault holds a secret `id`. */
  has(id: string): boolean {
    return Vault.has(this.#db, id);
  }

  /** Seals and stores a new secret (`SECRET_EXISTS` if the id is taken). */
  async add(id: string, kind: SecretKind, value: string): Promise<void> {
    checkId(id);
    checkKind(kind);
    const key = this.#live();
    if (this.#row(id)) throw exists(id);
    const sealed = await seal(key, new TextEncoder().encode(value), secretAad(id, kind));
    guard(() => {
      try {
        this.#db.prepare(
          "INSERT INTO vault_secrets (id, kind, sealed, created_at, last_used_at) VALUES (?, ?, ?, ?, NULL)",
        ).run(id, kind, sealed, new Date().toISOString());
      } catch (err) {
        if (/UNIQUE|PRIMARY KEY/i.test((err as Error).message)) throw exists(id);
        throw err;
      }
    });
  }

  /** The plaintext of a secret, for the runtime only; records its use. */
  async reveal(id: string): Promise<string> {
    checkId(id);
    const key = this.#live();
    const row = this.#row(id);
    if (!row) throw new VaultError("SECRET_NOT_FOUND", `no secret ${id}`);
    let plain: Uint8Array;
    try {
      plain = await open(key, row.sealed, secretAad(row.id, row.kind));
    } catch (err) {
      // Rekeyed by another process since this vault was opened: say so, not "tampered".
      if (guard(() => meta(this.#db, "check")) !== this.#check) throw mismatch(this.#db);
      throw err;
    }
    guard(() =>
      this.#db.prepare("UPDATE vault_secrets SET last_used_at = ? WHERE id = ?").run(
        new Date().toISOString(),
        id,
      )
    );
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(plain);
    } finally {
      plain.fill(0);
    }
  }

  /** Every secret's id, kind and times, by id; never a value. */
  list(): SecretInfo[] {
    this.#live();
    const rows = guard(() =>
      this.#db.prepare(
        "SELECT id, kind, created_at, last_used_at FROM vault_secrets ORDER BY id",
      ).all()
    ) as { id: string; kind: SecretKind; created_at: string; last_used_at: string | null }[];
    return rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      createdAt: r.created_at,
      lastUsedAt: r.last_used_at,
    }));
  }

  /** Deletes a secret; false when there was none. */
  remove(id: string): boolean {
    checkId(id);
    this.#live();
    const res = guard(() => this.#db.prepare("DELETE FROM vault_secrets WHERE id = ?").run(id));
    return Number(res.changes) > 0;
  }

  /**
   * Re-seals every secret and the key-check value under `source` (a passphrase gets a fresh
   * salt), all in one transaction; returns how many secrets were re-sealed. The old key then
   * fails with `VAULT_KEY_MISMATCH`.
   */
  async rekey(source: VaultKeySource): Promise<number> {
    const oldKey = this.#live();
    for (let attempt = 0; attempt < REKEY_ATTEMPTS; attempt++) {
      const rows = this.#rows();
      const salt = randomSalt();
      const newKey = await resolveKey(source, salt);
      const resealed: { id: string; sealed: Uint8Array }[] = [];
      for (const row of rows) {
        const aad = secretAad(row.id, row.kind);
        const plain = await open(oldKey, row.sealed, aad);
        resealed.push({ id: row.id, sealed: await seal(newKey, plain, aad) });
        plain.fill(0);
      }
      const check = toBase64(await makeKeyCheck(newKey));
      // WebCrypto is async and a transaction must not span awaits: write only if nothing
      // changed meanwhile, else seal again.
      const done = guard(() =>
        transaction(this.#db, () => {
          if (!sameRows(rows, this.#rows()) || meta(this.#db, "check") !== this.#check) {
            return false;
          }
          const update = this.#db.prepare("UPDATE vault_secrets SET sealed = ? WHERE id = ?");
          for (const r of resealed) update.run(r.sealed, r.id);
          setMeta(this.#db, "salt", toBase64(salt));
          setMeta(this.#db, "check", check);
          setMeta(this.#db, "key_source", source.type);
          return true;
        })
      );
      if (done) {
        this.#key = newKey;
        this.#check = check;
        return resealed.length;
      }
      if (meta(this.#db, "check") !== this.#check) throw mismatch(this.#db);
    }
    throw new VaultError("VAULT_UNREADABLE", "the vault kept changing during rekey; try again");
  }

  /** Drops the key; the vault can no longer be used. The database is the caller's. */
  [Symbol.dispose](): void {
    this.#key = undefined;
  }

  #live(): CryptoKey {
    if (!this.#key) throw new VaultError("VAULT_CLOSED", "the vault is closed");
    return this.#key;
  }

  #row(id: string): Row | undefined {
    return guard(() =>
      this.#db.prepare("SELECT id, kind, sealed FROM vault_secrets WHERE id = ?").get(id)
    ) as Row | undefined;
  }

  #rows(): Row[] {
    return guard(() =>
      this.#db.prepare("SELECT id, kind, sealed FROM vault_secrets ORDER BY id").all()
    ) as unknown as Row[];
  }
}

function checkId(id: string): void {
  if (typeof id !== "string" || !SECRET_ID_RE.test(id)) {
    throw new VaultError(
      "BAD_SECRET_ID",
      "a secret id is 1 to 64 of a-z 0-9 . _ - and starts with a letter or digit",
    );
  }
}

function checkKind(kind: string): void {
  if (!(SECRET_KINDS as readonly string[]).includes(kind)) {
    throw new VaultError("BAD_SECRET_KIND", `a secret kind is one of ${SECRET_KINDS.join(", ")}`);
  }
}

function exists(id: string): VaultError {
  return new VaultError("SECRET_EXISTS", `a secret ${id} already exists`);
}

function mismatch(db: DatabaseSync): VaultError {
  const stored = meta(db, "key_source");
  const hint = stored === "passphrase"
    ? " (it was set up with a passphrase)"
    : stored === "raw"
    ? " (it was set up with a raw key)"
    : "";
  return new VaultError("VAULT_KEY_MISMATCH", `the key does not open this vault${hint}`);
}

function meta(db: DatabaseSync, name: string): string | undefined {
  const row = db.prepare("SELECT value FROM vault_meta WHERE name = ?").get(name) as
    | { value: string }
    | undefined;
  return row?.value;
}

function insertMetaIfMissing(db: DatabaseSync, name: string, value: string): void {
  db.prepare("INSERT OR IGNORE INTO vault_meta (name, value) VALUES (?, ?)").run(name, value);
}

function setMeta(db: DatabaseSync, name: string, value: string): void {
  db.prepare("INSERT OR REPLACE INTO vault_meta (name, value) VALUES (?, ?)").run(name, value);
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

/** Runs a database step; SQLite failures become `VAULT_UNREADABLE`, vault errors pass. */
function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof VaultError) throw err;
    // SQLite messages name tables and constraints, never bound values.
    throw new VaultError("VAULT_UNREADABLE", `vault storage: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

function sameRows(a: readonly Row[], b: readonly Row[]): boolean {
  return a.length === b.length &&
    a.every((r, i) =>
      r.id === b[i].id && r.kind === b[i].kind && equalBytes(r.sealed, b[i].sealed)
    );
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function randomSalt(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(SALT_BYTES));
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    throw new VaultError("VAULT_UNREADABLE", "the vault's metadata is damaged");
  }
}
