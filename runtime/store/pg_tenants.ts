/**
 * Tenants in PostgreSQL: made and listed by the tables' owner (`omotai tenant add|list`
 * with the owner's URL). The runtime's role sees only its own tenant's row.
 *
 * @module
 */
import { OmotaiError } from "../errors.ts";
import type { PgDatabase } from "./pg_database.ts";
import { TENANT_ID } from "./tenant.ts";

/** Adds tenant `id` (its audit chain starts at its genesis); `BAD_TENANT` when taken. */
export async function addTenant(owner: PgDatabase, id: string): Promise<void> {
  if (!TENANT_ID.test(id)) {
    throw new OmotaiError("BAD_TENANT", "a tenant id is 1-63 of a-z, 0-9, _ and -");
  }
  const added = await owner.transaction((tx) =>
    tx`INSERT INTO tenants (id) VALUES (${id}) ON CONFLICT DO NOTHING RETURNING id`
  );
  if (added.length === 0) throw new OmotaiError("BAD_TENANT", `tenant ${id} exists`);
}

/** Every tenant, oldest first. */
export async function listTenants(owner: PgDatabase): Promise<{ id: string; created: string }[]> {
  const rows = await owner.transaction((tx) =>
    tx<
      { id: string; created_at: Date }[]
    >`SELECT id, created_at FROM tenants ORDER BY created_at, id`
  );
  return rows.map((r) => ({ id: r.id, created: r.created_at.toISOString() }));
}
