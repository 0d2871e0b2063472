/**
 * Tenants in PostgreSQL: made and listed by the tables' owner (`omotai tenant add|list`
 * with the owner's URL). The runtime's role sees only its own tenant's row.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";
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

/**
 * Binds the database login `role` to tenant `id` (the owner's pool): that login then acts
 * for this tenant only, whatever `app.tenant_id` it names (`app_tenant()`). Rebinding moves
 * it; `BAD_TENANT` for an unknown tenant or a role name that is not one.
 */
export async function bindTenantLogin(owner: PgDatabase, id: string, role: string): Promise<void> {
  if (!TENANT_ID.test(id)) {
    throw new OmotaiError("BAD_TENANT", "a tenant id is 1-63 of a-z, 0-9, _ and -");
  }
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(role)) {
    throw new OmotaiError("BAD_TENANT", "a login role is 1-63 of a-z, 0-9 and _");
  }
  const done = await owner.transaction(async (tx) => {
    const known = await tx`SELECT 1 FROM tenants WHERE id = ${id}`;
    const login = await tx`SELECT 1 FROM pg_roles WHERE rolname = ${role} AND rolcanlogin`;
    if (known.length === 0 || login.length === 0) return false;
    await tx`INSERT INTO tenant_logins (role, tenant_id) VALUES (${role}, ${id})
      ON CONFLICT (role) DO UPDATE SET tenant_id = excluded.tenant_id`;
    return true;
  });
  if (!done) throw new OmotaiError("BAD_TENANT", `no tenant ${id}, or no login role ${role}`);
}

/** The logins bound to tenants, by role. */
export async function tenantLogins(owner: PgDatabase): Promise<{ role: string; tenant: string }[]> {
  const rows = await owner.transaction((tx) =>
    tx<{ role: string; tenant_id: string }[]>`SELECT role, tenant_id FROM tenant_logins
      ORDER BY role`
  );
  return rows.map((r) => ({ role: r.role, tenant: r.tenant_id }));
}
