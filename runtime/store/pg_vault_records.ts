/**
 * One tenant's vault in PostgreSQL (`vault_meta`, `vault_secrets`, under row-level security;
 * `pg_migration_vault.ts`): the `VaultRecords` port of `vault/records.ts`, so every runtime of
 * the tenant opens the same vault (`Vault.open(new PgVaultRecords(db, tenant), key)`): one
 * salt and key-check value per tenant, a runtime with another key gets `VAULT_KEY_MISMATCH`.
 * Only sealed bytes and their ids, kinds and times come and go here; keys and values never do.
 *
 * The class matches the port by shape: `runtime/store/` may not import `vault/` (its layer
 * rule), so `pg_vault_records_test.ts` checks that it is assignable to `VaultRecords`.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { PgTx } from "./pg_database.ts";
import { PgTenantStore } from "./pg_tenant_store.ts";

/** The vault's meta values (`VaultMeta` of `vault/records.ts`). */
export interface PgVaultMeta {
  format: string;
  salt: string;
  check?: string;
  keySource?: string;
}

/** A secret's record (`SecretRecord`). */
export interface PgSecretRecord {
  id: string;
  kind: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** A secret with its sealed bytes (`SealedRecord`). */
export interface PgSealedRecord extends PgSecretRecord {
  sealed: Uint8Array;
}

/** A rekey's compare-and-swap (`Rekeying`). */
export interface PgRekeying {
  expect: {
    check: string;
    records: readonly Pick<PgSealedRecord, "id" | "kind" | "sealed">[];
  };
  next: {
    salt: string;
    check: string;
    keySource: string;
    sealed: readonly { id: string; sealed: Uint8Array }[];
  };
}

interface MetaRow {
  format: string;
  salt: string;
  key_check: string | null;
  key_source: string | null;
}

interface SecretRow {
  id: string;
  kind: string;
  created_at: Date;
  last_used_at: Date | null;
}

interface SealedRow extends SecretRow {
  sealed: Uint8Array;
}

/** Tenant `tenant`'s vault in `db` (the runtime's pool). */
export class PgVaultRecords extends PgTenantStore {
  async meta(): Promise<PgVaultMeta | undefined> {
    return await this.inTenant(async (tx) => {
      const [row] = await this.#metaRow(tx);
      return row && meta(row);
    });
  }

  async insertMetaIfMissing(values: PgVaultMeta): Promise<PgVaultMeta> {
    const t = this.tenant;
    return await this.inTenant(async (tx) => {
      // Two openers at once: the second waits on the first's row, then leaves it.
      await tx`INSERT INTO vault_meta (tenant_id, format, salt, key_check, key_source)
        VALUES (${t}, ${values.format}, ${values.salt}, ${values.check ?? null},
          ${values.check === undefined ? null : values.keySource ?? null})
        ON CONFLICT (tenant_id) DO NOTHING`;
      if (values.check !== undefined) {
        await tx`UPDATE vault_meta SET key_check = ${values.check},
          key_source = ${values.keySource ?? null}
          WHERE tenant_id = ${t} AND key_check IS NULL`;
      }
      const [row] = await this.#metaRow(tx);
      return meta(row);
    });
  }

  async get(id: string): Promise<PgSealedRecord | undefined> {
    const [row] = await this.inTenant((tx) =>
      tx<SealedRow[]>`SELECT id, kind, sealed, created_at, last_used_at FROM vault_secrets
        WHERE tenant_id = ${this.tenant} AND id = ${id}`
    );
    return row && sealedRecord(row);
  }

  async list(): Promise<PgSecretRecord[]> {
    const rows = await this.inTenant((tx) =>
      tx<SecretRow[]>`SELECT id, kind, created_at, last_used_at FROM vault_secrets
        WHERE tenant_id = ${this.tenant} ORDER BY id COLLATE "C"`
    );
    return rows.map(record);
  }

  async listSealed(): Promise<PgSealedRecord[]> {
    const rows = await this.inTenant((tx) => this.#sealedRows(tx));
    return rows.map(sealedRecord);
  }

  async put(rec: PgSealedRecord, check: string): Promise<"added" | "taken" | "rekeyed"> {
    const t = this.tenant;
    return await this.inTenant(async (tx) => {
      // Waits for a rekey in progress (it holds the row FOR UPDATE), then reads its outcome.
      const [m] = await tx<{ key_check: string | null }[]>`SELECT key_check FROM vault_meta
        WHERE tenant_id = ${t} FOR SHARE`;
      if (!m || m.key_check !== check) return "rekeyed";
      const added = await tx`INSERT INTO vault_secrets
          (tenant_id, id, kind, sealed, created_at, last_used_at)
        VALUES (${t}, ${rec.id}, ${rec.kind}, ${Buffer.from(rec.sealed)},
          ${new Date(rec.createdAt)},
          ${rec.lastUsedAt === null ? null : new Date(rec.lastUsedAt)})
        ON CONFLICT (tenant_id, id) DO NOTHING RETURNING id`;
      return added.length > 0 ? "added" : "taken";
    });
  }

  async touch(id: string, at: string): Promise<void> {
    await this.inTenant((tx) =>
      tx`UPDATE vault_secrets SET last_used_at = ${new Date(at)}
        WHERE tenant_id = ${this.tenant} AND id = ${id}`
    );
  }

  async delete(id: string): Promise<boolean> {
    // Through vault_remove(): the runtime's role has no table-wide DELETE.
    const [{ gone }] = await this.inTenant((tx) =>
      tx<{ gone: boolean }[]>`SELECT vault_remove(${id}) AS gone`
    );
    return gone;
  }

  async replaceAll(change: PgRekeying): Promise<boolean> {
    const t = this.tenant;
    return await this.inTenant(async (tx) => {
      // Holds the tenant's meta row: puts and removals wait until this commits.
      const [m] = await tx<{ key_check: string | null }[]>`SELECT key_check FROM vault_meta
        WHERE tenant_id = ${t} FOR UPDATE`;
      if (!m || m.key_check !== change.expect.check) return false;
      if (!sameRecords(await this.#sealedRows(tx), change.expect.records)) return false;
      const updates = await Promise.all(
        change.next.sealed.map((r) =>
          tx`UPDATE vault_secrets SET sealed = ${Buffer.from(r.sealed)}
          WHERE tenant_id = ${t} AND id = ${r.id}`
        ),
      );
      // Cannot happen while the row is held; should it, the transaction is abandoned whole.
      if (updates.some((u) => u.count !== 1)) throw new Error("a secret changed during rekey");
      await tx`UPDATE vault_meta SET salt = ${change.next.salt},
        key_check = ${change.next.check}, key_source = ${change.next.keySource}
        WHERE tenant_id = ${t}`;
      return true;
    });
  }

  #metaRow(tx: PgTx): Promise<MetaRow[]> {
    return tx<MetaRow[]>`SELECT format, salt, key_check, key_source FROM vault_meta
      WHERE tenant_id = ${this.tenant}`;
  }

  #sealedRows(tx: PgTx): Promise<SealedRow[]> {
    return tx<SealedRow[]>`SELECT id, kind, sealed, created_at, last_used_at FROM vault_secrets
      WHERE tenant_id = ${this.tenant} ORDER BY id COLLATE "C"`;
  }
}

function meta(row: MetaRow): PgVaultMeta {
  const out: PgVaultMeta = { format: row.format, salt: row.salt };
  if (row.key_check !== null) out.check = row.key_check;
  if (row.key_source !== null) out.keySource = row.key_source;
  return out;
}

function record(row: SecretRow): PgSecretRecord {
  return {
    id: row.id,
    kind: row.kind,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

function sealedRecord(row: SealedRow): PgSealedRecord {
  // A plain copy, not the driver's Buffer.
  return { ...record(row), sealed: new Uint8Array(row.sealed) };
}

/** Same ids, kinds and sealed bytes, in the same order (`sameRecords` of `vault/records.ts`). */
function sameRecords(
  rows: readonly Pick<PgSealedRecord, "id" | "kind" | "sealed">[],
  expected: readonly Pick<PgSealedRecord, "id" | "kind" | "sealed">[],
): boolean {
  return rows.length === expected.length &&
    rows.every((r, i) =>
      r.id === expected[i].id && r.kind === expected[i].kind &&
      Buffer.compare(r.sealed, expected[i].sealed) === 0
    );
}
