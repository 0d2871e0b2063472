/**
 * What every PostgreSQL store of one tenant's rows shares: the database and the tenant, and
 * the one way to reach the rows, a transaction as that tenant (`PgDatabase.tenant`, under its
 * row-level security). A store extends it and adds its statements.
 *
 * @module
 */
import type { PgDatabase, PgTx } from "./pg_database.ts";

/** A store of tenant `tenant`'s rows in `db`. */
export abstract class PgTenantStore {
  /** The tenant whose rows this store reads and writes. */
  readonly tenant: string;
  /** The database, for the rare statement that is no one tenant's (`agent_by_key`). */
  protected readonly db: PgDatabase;

  constructor(db: PgDatabase, tenant: string) {
    this.db = db;
    this.tenant = tenant;
  }

  /** Runs `fn` in one transaction as the tenant. */
  protected inTenant<T>(fn: (tx: PgTx) => Promise<T>): Promise<T> {
    return this.db.tenant(this.tenant, fn);
  }
}
