/**
 * The shared store's migration for the vault: one numbered step of `PG_MIGRATIONS`
 * (`pg_migrations.ts`), kept in its own file.
 *
 * One vault per tenant, shared by every runtime of the tenant
 * (`runtime/store/pg_vault_records.ts`, behind `vault/`'s `VaultRecords` port): its format,
 * salt and key-check value in `vault_meta` (one row per tenant), its secrets sealed one by one
 * (AES-256-GCM, bound to id and kind) in `vault_secrets`. The database holds ciphertexts only:
 * keys and values never reach it. Both tables are under the tenant's row-level security.
 *
 * The runtime's group may read its tenant's rows; insert the vault's meta (its first open) and
 * secrets; update only the salt, key-check value and key source (a rekey, the first open's
 * check) and a secret's sealed bytes and last use (a rekey, a reveal); and delete a secret only
 * through `vault_remove()`. No table-wide UPDATE or DELETE, so no `LOCK TABLE` against every
 * tenant. Writes of secrets take turns with a rekey on the tenant's `vault_meta` row: a put or
 * a removal holds it `FOR SHARE`, a rekey `FOR UPDATE`, so a value sealed under the old key
 * cannot land after a rekey, nor a rekey miss a secret.
 *
 * @module
 */

import { TENANT_UNSET_GUARD } from "./pg_sql.ts";

/** The SQL of the step (run by the owner, in one transaction). */
export const VAULT_MIGRATION = `
  CREATE TABLE vault_meta (
    tenant_id text PRIMARY KEY REFERENCES tenants(id),
    format text NOT NULL CHECK (format ~ '^[0-9]{1,3}$'),
    salt text NOT NULL CHECK (salt ~ '^[A-Za-z0-9+/]{4,88}={0,2}$'),
    key_check text CHECK (key_check ~ '^[A-Za-z0-9+/]{4,200}={0,2}$'),
    key_source text CHECK (key_source IN ('raw', 'passphrase')),
    CHECK ((key_check IS NULL) = (key_source IS NULL))
  );
  CREATE TABLE vault_secrets (
    tenant_id text NOT NULL REFERENCES vault_meta(tenant_id),
    id text NOT NULL CHECK (id ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
    kind text NOT NULL CHECK (kind IN ('password', 'username', 'totp', 'generic')),
    -- version (1) || nonce (12) || ciphertext || tag (16): never shorter than 29 bytes.
    sealed bytea NOT NULL CHECK (octet_length(sealed) >= 29),
    created_at timestamptz NOT NULL,
    last_used_at timestamptz,
    PRIMARY KEY (tenant_id, id)
  );
  SELECT tenant_rls('vault_meta', 'tenant_id');
  SELECT tenant_rls('vault_secrets', 'tenant_id');

  -- Removal through a function, not a table-wide DELETE grant (which would also let the role
  -- LOCK the whole table against every tenant). It takes turns with a rekey.
  CREATE FUNCTION vault_remove(secret_id text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $f$
  DECLARE t text := current_setting('app.tenant_id', true); n integer;
  BEGIN
${TENANT_UNSET_GUARD}
    PERFORM 1 FROM public.vault_meta WHERE tenant_id = t FOR SHARE;
    DELETE FROM public.vault_secrets WHERE tenant_id = t AND id = secret_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n > 0;
  END $f$;

  REVOKE ALL ON vault_meta, vault_secrets FROM PUBLIC;
  REVOKE EXECUTE ON FUNCTION vault_remove(text) FROM PUBLIC;
  GRANT SELECT, INSERT ON vault_meta, vault_secrets TO omotai_runtime;
  GRANT UPDATE (salt, key_check, key_source) ON vault_meta TO omotai_runtime;
  GRANT UPDATE (sealed, last_used_at) ON vault_secrets TO omotai_runtime;
  GRANT EXECUTE ON FUNCTION vault_remove(text) TO omotai_runtime;
`;
