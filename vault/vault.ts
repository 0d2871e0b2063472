/**
 * The vault: secrets sealed one by one (AES-256-GCM, bound to id and kind) in a store behind
 * the {@link VaultRecords} port: two tables of the caller's SQLite database (a `DatabaseSync`
 * given to `Vault.open`), or a shared store a runtime passes in (its tenant's rows in
 * PostgreSQL). `Vault.open` checks the key against the stored key-check value, so a wrong key
 * fails there with `VAULT_KEY_MISMATCH`, never at first use. No value is ever stored, returned
 * by `list()`, logged or put in an error message; `reveal()` is for the runtime only.
 *
 * `list()` and `has()` answer at once. Over SQLite they read the database each time. Over a
 * store that cannot answer synchronously they read an index: loaded at open, changed at once
 * by this vault's own `add`, `reveal`, `remove` and `rekey`, and read again by `refresh()` and
 * every `refreshMs` (default 5 s). What another runtime of the tenant adds or removes shows in
 * them within that time; `reveal()`, `add()`, `remove()` and `rekey()` always ask the store.
 *
 * Adding is always an atomic insert-if-absent (`addIfAbsent`): an id that holds a value is
 * never overwritten, and of two concurrent adds into one id exactly one writes.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { CodedError } from "../shared/mod.ts";
import { VaultError } from "./errors.ts";
import { keyMatches, makeKeyCheck, resolveKey, SALT_BYTES, type VaultKeySource } from "./key.ts";
import {
  type SealedRecord,
  type SecretRecord,
  SqliteVaultRecords,
  type VaultRecords,
} from "./records.ts";
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

/** How often a vault over an asynchronous store reads its index again, by default. */
export const VAULT_REFRESH_MS = 5_000;

/** Options of `Vault.open`. */
export interface VaultOptions {
  /**
   * A store without a synchronous listing (PostgreSQL): how often `list()` and `has()` are
   * read again, in ms (default {@link VAULT_REFRESH_MS}; 0: only by `refresh()` and this
   * vault's own calls). Ignored over SQLite, which is read each time.
   */
  refreshMs?: number;
  /**
   * Called after a `refresh()` (the timer's or a caller's) that found secrets this vault did
   * not know: added by another runtime. Ids and kinds only; `reveal()` them to learn values.
   */
  onNewSecrets?: (secrets: SecretInfo[]) => void;
}

const REKEY_ATTEMPTS = 3;
const REFRESH_ATTEMPTS = 3;

/** Encrypted secrets in a store. Dispose to drop the key; the store stays open. */
export class Vault implements Disposable {
  #records: VaultRecords;
  #key: CryptoKey | undefined;
  #check: string;
  /** The index of a store without `listNow` (see the module's doc); undefined over SQLite. */
  #index: Map<string, SecretInfo> | undefined;
  /** Counts this vault's own changes to the index, so a refresh begun before one yields. */
  #changes = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  #onNew: ((secrets: SecretInfo[]) => void) | undefined;

  private constructor(records: VaultRecords, key: CryptoKey, check: string) {
    this.#records = records;
    this.#key = key;
    this.#check = check;
  }

  /**
   * Opens the vault in `db` (a SQLite database: its tables are created when missing) or in
   * `records` (a store's port) with `source`. The first open stores the salt and the
   * key-check value; every later one must match it (`VAULT_KEY_MISMATCH`).
   */
  static async open(
    db: DatabaseSync | VaultRecords,
    source: VaultKeySource,
    options: VaultOptions = {},
  ): Promise<Vault> {
    const records = recordsOf(db);
    const stored = await guard(() =>
      records.insertMetaIfMissing({
        format: String(SEAL_VERSION),
        salt: toBase64(randomSalt()),
      })
    );
    if (stored.format !== String(SEAL_VERSION)) {
      throw new VaultError("VAULT_UNREADABLE", `the vault has format ${stored.format}`);
    }
    const key = await resolveKey(source, fromBase64(stored.salt));
    let check = stored.check;
    if (check === undefined) {
      const made = toBase64(await makeKeyCheck(key));
      // Read back: another process may have set the vault up first, with another key.
      check = (await guard(() =>
        records.insertMetaIfMissing({ ...stored, check: made, keySource: source.type })
      )).check;
    }
    if (check === undefined) throw damaged();
    if (!(await keyMatches(key, fromBase64(check)))) throw await mismatch(records);
    const vault = new Vault(records, key, check);
    if (!records.listNow) {
      vault.#index = new Map();
      await vault.refresh();
      vault.#onNew = options.onNewSecrets;
      const every = options.refreshMs ?? VAULT_REFRESH_MS;
      if (every > 0) {
        vault.#timer = setInterval(() => void vault.refresh().catch(() => {}), every);
        Deno.unrefTimer(vault.#timer);
      }
    }
    return vault;
  }

  /**
   * Whether the vault in `db` holds a secret `id` (no vault tables: none). Needs no key: only
   * the id is looked at, so stores that refer to secrets (grants) ask here, not the table.
   * Over a store's port (`records`) the answer is a promise.
   */
  static has(db: DatabaseSync, id: string): boolean;
  static has(records: VaultRecords, id: string): Promise<boolean>;
  static has(db: DatabaseSync | VaultRecords, id: string): boolean | Promise<boolean> {
    if (isRecords(db)) return guard(async () => (await db.get(id)) !== undefined);
    return new SqliteVaultRecords(db).hasNow(id);
  }

  /** Whether this vault holds a secret `id` (over an asynchronous store: its index). */
  has(id: string): boolean {
    const records = this.#records;
    if (records.hasNow) return guardNow(() => records.hasNow!(id));
    if (records.listNow) return guardNow(() => records.listNow!().some((r) => r.id === id));
    return this.#index?.has(id) ?? false;
  }

  /** Seals and stores a new secret (`SECRET_EXISTS` if the id is taken): `addIfAbsent`. */
  async add(id: string, kind: SecretKind, value: string): Promise<void> {
    await this.addIfAbsent(id, kind, value);
  }

  /**
   * Seals `value` and stores it under `id` only if `id` holds nothing: one atomic
   * insert-if-absent in the store (`VaultRecords.put`: SQLite's `INSERT … ON CONFLICT DO
   * NOTHING` in an immediate transaction, PostgreSQL's on the tenant's primary key), never an
   * overwrite. An id that already holds a value fails closed with `SECRET_EXISTS` (the stored
   * value stays as it was); of two concurrent calls into one empty id (this vault or another,
   * another runtime of the tenant) exactly one writes and the other gets `SECRET_EXISTS`. The
   * path a capture writes by: what a vendor minted lands here or nowhere. Returns the new
   * secret's info (never its value). Throws `BAD_SECRET_ID`, `BAD_SECRET_KIND`,
   * `SECRET_EXISTS`, `VAULT_KEY_MISMATCH` (rekeyed meanwhile: nothing written), `VAULT_CLOSED`
   * or `VAULT_UNREADABLE`.
   */
  async addIfAbsent(id: string, kind: SecretKind, value: string): Promise<SecretInfo> {
    checkId(id);
    checkKind(kind);
    const key = this.#live();
    // Saves sealing for a taken id; the write below is what decides.
    if (await guard(() => this.#records.get(id))) throw exists(id);
    const sealed = await seal(key, new TextEncoder().encode(value), secretAad(id, kind));
    const record: SealedRecord = {
      id,
      kind,
      sealed,
      createdAt: new Date().toISOString(),
      lastUsedAt: null,
    };
    const outcome = await guard(() => this.#records.put(record, this.#check));
    if (outcome === "taken") throw exists(id);
    // Rekeyed since this vault was opened: the value was sealed under the old key.
    if (outcome === "rekeyed") throw await mismatch(this.#records);
    this.#note(record);
    return info(record);
  }

  /** The plaintext of a secret, for the runtime only; records its use. */
  async reveal(id: string): Promise<string> {
    checkId(id);
    const key = this.#live();
    const row = await guard(() => this.#records.get(id));
    if (!row) {
      this.#forget(id);
      throw new VaultError("SECRET_NOT_FOUND", `no secret ${id}`);
    }
    let plain: Uint8Array;
    try {
      plain = await open(key, row.sealed, secretAad(row.id, row.kind));
    } catch (err) {
      // Rekeyed by another process since this vault was opened: say so, not "tampered".
      await this.#stillKeyed();
      throw err;
    }
    try {
      const at = new Date().toISOString();
      await guard(() => this.#records.touch(id, at));
      this.#note({ ...row, lastUsedAt: at });
      return new TextDecoder("utf-8", { fatal: true }).decode(plain);
    } finally {
      plain.fill(0);
    }
  }

  /** Every secret's id, kind and times, by id; never a value. */
  list(): SecretInfo[] {
    this.#live();
    const records = this.#records;
    if (records.listNow) return guardNow(() => records.listNow!()).map(info);
    return [...this.#index!.values()].map((s) => ({ ...s })).sort(byId);
  }

  /**
   * Deletes a secret; false when there was none. Asynchronous: over a shared store the delete
   * is a round trip (it was synchronous when the vault was SQLite only).
   */
  async remove(id: string): Promise<boolean> {
    checkId(id);
    this.#live();
    const gone = await guard(() => this.#records.delete(id));
    this.#forget(id);
    return gone;
  }

  /**
   * Re-seals every secret and the key-check value under `source` (a passphrase gets a fresh
   * salt), all in one transaction; returns how many secrets were re-sealed. The old key then
   * fails with `VAULT_KEY_MISMATCH`.
   */
  async rekey(source: VaultKeySource): Promise<number> {
    const oldKey = this.#live();
    for (let attempt = 0; attempt < REKEY_ATTEMPTS; attempt++) {
      const rows = await guard(() => this.#records.listSealed());
      const salt = randomSalt();
      const newKey = await resolveKey(source, salt);
      const resealed: { id: string; sealed: Uint8Array }[] = [];
      for (const row of rows) {
        const aad = secretAad(row.id, row.kind);
        let plain: Uint8Array;
        try {
          plain = await open(oldKey, row.sealed, aad);
        } catch (err) {
          // Rekeyed by another process since this vault was opened: say so, not "tampered".
          await this.#stillKeyed();
          throw err;
        }
        try {
          resealed.push({ id: row.id, sealed: await seal(newKey, plain, aad) });
        } finally {
          plain.fill(0);
        }
      }
      const check = toBase64(await makeKeyCheck(newKey));
      // WebCrypto is async and a transaction must not span awaits: the store writes only if
      // nothing changed meanwhile, else this seals again.
      const done = await guard(() =>
        this.#records.replaceAll({
          expect: { check: this.#check, records: rows },
          next: { salt: toBase64(salt), check, keySource: source.type, sealed: resealed },
        })
      );
      if (done) {
        this.#key = newKey;
        this.#check = check;
        for (const row of rows) this.#note(row);
        return resealed.length;
      }
      await this.#stillKeyed();
    }
    throw new VaultError("VAULT_UNREADABLE", "the vault kept changing during rekey; try again");
  }

  /**
   * Reads the index again (a store without a synchronous listing; over SQLite nothing to do):
   * what other runtimes added or removed shows in `list()` and `has()` from now on.
   */
  async refresh(): Promise<void> {
    this.#live();
    if (!this.#index) return;
    for (let attempt = 0; attempt < REFRESH_ATTEMPTS; attempt++) {
      const changes = this.#changes;
      const rows = await guard(() => this.#records.list());
      // This vault changed the index meanwhile: the rows may predate it; read again.
      if (changes !== this.#changes || !this.#index) continue;
      const known = this.#index;
      this.#index = new Map(rows.map((r) => [r.id, info(r)]));
      const added = [...this.#index.values()].filter((s) => !known.has(s.id));
      if (added.length > 0 && this.#onNew) {
        try {
          this.#onNew(added.map((s) => ({ ...s })));
        } catch { /* the listener's own failure is its own */ }
      }
      return;
    }
  }

  /** Drops the key (and stops the index's refresh); the store is the caller's. */
  [Symbol.dispose](): void {
    this.#key = undefined;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #live(): CryptoKey {
    if (!this.#key) throw new VaultError("VAULT_CLOSED", "the vault is closed");
    return this.#key;
  }

  /** `VAULT_KEY_MISMATCH` when the store's key-check value is no longer this vault's. */
  async #stillKeyed(): Promise<void> {
    const meta = await guard(() => this.#records.meta());
    if (meta?.check !== this.#check) throw await mismatch(this.#records);
  }

  /** This vault learned `record` (added, revealed, resealed): the index shows it at once. */
  #note(record: SecretRecord): void {
    if (!this.#index) return;
    this.#changes++;
    this.#index.set(record.id, info(record));
  }

  #forget(id: string): void {
    if (!this.#index) return;
    this.#changes++;
    this.#index.delete(id);
  }
}

function recordsOf(db: DatabaseSync | VaultRecords): VaultRecords {
  return isRecords(db) ? db : new SqliteVaultRecords(db);
}

function isRecords(db: DatabaseSync | VaultRecords): db is VaultRecords {
  return typeof (db as Partial<VaultRecords>).insertMetaIfMissing === "function";
}

function info(r: SecretRecord): SecretInfo {
  return { id: r.id, kind: r.kind as SecretKind, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt };
}

function byId(a: SecretInfo, b: SecretInfo): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
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

function damaged(): VaultError {
  return new VaultError("VAULT_UNREADABLE", "the vault's metadata is damaged");
}

async function mismatch(records: VaultRecords): Promise<VaultError> {
  const stored = (await records.meta().catch(() => undefined))?.keySource;
  const hint = stored === "passphrase"
    ? " (it was set up with a passphrase)"
    : stored === "raw"
    ? " (it was set up with a raw key)"
    : "";
  return new VaultError("VAULT_KEY_MISMATCH", `the key does not open this vault${hint}`);
}

/** A store's failure as `VAULT_UNREADABLE`; vault errors pass. */
function storageError(err: unknown): VaultError {
  if (err instanceof VaultError) return err;
  // Stores' messages name tables, constraints and codes, never bound values (SQLite's do
  // not quote them; the PostgreSQL pool keeps only the server's error code).
  const what = err instanceof CodedError
    ? `${err.code}: ${err.message}`
    : err instanceof Error
    ? err.message
    : "failed";
  return new VaultError("VAULT_UNREADABLE", `vault storage: ${what}`, { cause: err });
}

/** Runs a store call; its failure becomes `VAULT_UNREADABLE`. */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw storageError(err);
  }
}

/** {@link guard} for a store's synchronous reads. */
function guardNow<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw storageError(err);
  }
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
    throw damaged();
  }
}
