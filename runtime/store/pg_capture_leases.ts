/**
 * Capture leases shared by every runtime of a tenant, in PostgreSQL (`capture_leases`, under
 * row-level security, reached only through three functions: `pg_migration_capture_leases.ts`).
 * Each call is one function in one transaction on the database's clock, so runtimes whose
 * clocks differ agree on when a lease expired. The rule they serve is
 * `capture_lease_store.ts`'s.
 *
 * @module
 */
import type { CaptureLeaseRows, LeaseTake } from "./capture_lease_store.ts";
import { PgTenantStore } from "./pg_tenant_store.ts";

interface TakeRow {
  taken: boolean;
  busy_target: string | null;
  busy_holder: string | null;
  busy_until: Date | null;
}

/** Lease rows of one tenant. */
export class PgCaptureLeaseRows extends PgTenantStore implements CaptureLeaseRows {
  async take(
    targets: readonly string[],
    token: string,
    holder: string,
    ttlMs: number,
  ): Promise<LeaseTake> {
    const [row] = await this.inTenant((tx) =>
      tx<TakeRow[]>`SELECT * FROM capture_lease_take(${[...targets]}::text[], ${token},
          ${holder}, ${Math.round(ttlMs)}::bigint)`
    );
    if (row.taken) return { taken: true };
    return {
      taken: false,
      target: row.busy_target,
      by: row.busy_holder,
      until: row.busy_until?.toISOString() ?? null,
    };
  }

  async renew(token: string, ttlMs: number): Promise<number> {
    const [{ n }] = await this.inTenant((tx) =>
      tx<{ n: number }[]>`SELECT capture_lease_renew(${token}, ${Math.round(ttlMs)}::bigint) AS n`
    );
    return n;
  }

  async release(token: string): Promise<void> {
    await this.inTenant((tx) => tx`SELECT capture_lease_release(${token})`);
  }
}
