/**
 * The PostgreSQL `GrantStore`: one tenant's grants (`grants`, under row-level security). A
 * `change()` is one transaction that locks the grants it selects (`SELECT … FOR UPDATE`, in
 * id order so two redemptions never wait on each other in a circle) and makes the plan's
 * conditional `UPDATE … RETURNING`s: of two runtimes redeeming one `once` grant, the second
 * waits for the first's commit, then reads the grant used. A trigger
 * (`pg_migration_grants.ts`) refuses what no runtime may write: a revoked grant revived,
 * origins widened, a binding moved.
 *
 * Every time written is the caller's (`at`): the database's clock only orders grants added in
 * the same millisecond. So both adapters agree under one clock, and a runtime's skew moves an
 * expiry by that skew on that runtime only (keep the runtimes on NTP).
 *
 * @module
 */
import { type GrantRow, toGrantRecord } from "./grant_row.ts";
import type {
  GrantChange,
  GrantListFilter,
  GrantPlan,
  GrantRecord,
  GrantSelect,
  GrantStore,
  GrantWrite,
  NewGrantRecord,
} from "./grant_store.ts";
import type { PgTx } from "./pg_database.ts";
import { PgTenantStore } from "./pg_tenant_store.ts";

/** A `grants` row as the client returns it. */
interface PgGrantRow {
  id: string;
  secret_id: string;
  agent: string;
  purpose: string;
  mode: string;
  uses: unknown;
  expires_at: Date;
  created_at: Date;
  created_by: string;
  approved_at: Date | null;
  approved_by: string | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  revoke_reason: string | null;
  session_id: string | null;
  used_at: Date | null;
  last_redeemed_at: Date | null;
  redemptions: number;
}

/** Tenant `tenant`'s grants in `db`. */
export class PgGrantStore extends PgTenantStore implements GrantStore {
  async insert(r: NewGrantRecord): Promise<GrantRecord> {
    // A JSON value (the client serializes it for the jsonb column).
    const uses = JSON.parse(JSON.stringify(r.uses));
    const [row] = await this.inTenant((tx) =>
      tx<PgGrantRow[]>`INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode,
          uses, expires_at, created_at, created_by, approved_at, approved_by)
        VALUES (${this.tenant}, ${r.id}, ${r.secret_id}, ${r.agent}, ${r.purpose}, ${r.mode},
          ${tx.json(uses)}, ${r.expires_at}, ${r.created_at}, ${r.created_by},
          ${r.approved_at}, ${r.approved_by})
        RETURNING *`
    );
    return record(row);
  }

  async get(id: string): Promise<GrantRecord | undefined> {
    const [row] = await this.inTenant((tx) =>
      tx<PgGrantRow[]>`SELECT * FROM grants WHERE tenant_id = ${this.tenant} AND id = ${id}`
    );
    return row ? record(row) : undefined;
  }

  async find(ids: readonly string[]): Promise<GrantRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.inTenant((tx) =>
      tx<PgGrantRow[]>`SELECT * FROM grants WHERE tenant_id = ${this.tenant} AND id IN ${tx(ids)}`
    );
    return rows.map(record);
  }

  async list(filter: GrantListFilter = {}): Promise<GrantRecord[]> {
    const secretId = filter.secretId ?? null;
    const agent = filter.agent ?? null;
    const rows = await this.inTenant((tx) =>
      tx<PgGrantRow[]>`SELECT * FROM grants WHERE tenant_id = ${this.tenant}
        AND (${secretId}::text IS NULL OR secret_id = ${secretId})
        AND (${agent}::text IS NULL OR agent = ${agent})
        ORDER BY created_at DESC, inserted_at DESC, id DESC`
    );
    return rows.map(record);
  }

  change<T>(
    select: GrantSelect,
    plan: (records: GrantRecord[]) => GrantPlan<T>,
  ): Promise<GrantChange<T>> {
    return this.inTenant(async (tx) => {
      const rows = "ids" in select
        ? select.ids.length === 0 ? [] : await tx<PgGrantRow[]>`SELECT * FROM grants
            WHERE tenant_id = ${this.tenant} AND id IN ${tx(select.ids)}
            ORDER BY id FOR UPDATE`
        // Locked in id order, returned oldest first (as a search reports them).
        : await tx<PgGrantRow[]>`WITH locked AS MATERIALIZED (
            SELECT * FROM grants WHERE tenant_id = ${this.tenant} AND agent = ${select.agent}
            ORDER BY id FOR UPDATE)
          SELECT * FROM locked ORDER BY created_at, inserted_at, id`;
      const { writes, result } = plan(rows.map(record));
      const written: (GrantRecord | undefined)[] = [];
      for (const w of writes) {
        const [row] = await this.#write(tx, w);
        written.push(row ? record(row) : undefined);
      }
      return { result, written };
    });
  }

  async revokeForSecret(
    secretId: string,
    by: string,
    reason: string,
    at: string,
  ): Promise<GrantRecord[]> {
    const rows = await this.inTenant((tx) =>
      tx<(PgGrantRow & { inserted_at: Date })[]>`UPDATE grants
        SET revoked_at = ${at}, revoked_by = ${by}, revoke_reason = ${reason}
        WHERE tenant_id = ${this.tenant} AND secret_id = ${secretId} AND revoked_at IS NULL
        RETURNING *`
    );
    return [...rows]
      .sort((a, b) =>
        a.created_at.getTime() - b.created_at.getTime() ||
        a.inserted_at.getTime() - b.inserted_at.getTime()
      )
      .map(record);
  }

  /** Makes one conditional write (see `GrantWrite`); its row after, if it matched. */
  #write(tx: PgTx, w: GrantWrite): Promise<PgGrantRow[]> {
    const mine = tx`tenant_id = ${this.tenant} AND id = ${w.id}`;
    if (w.kind === "approve") {
      return tx<PgGrantRow[]>`UPDATE grants SET approved_at = ${w.at}, approved_by = ${w.by}
        WHERE ${mine} AND approved_at IS NULL AND revoked_at IS NULL RETURNING *`;
    }
    if (w.kind === "revoke") {
      return tx<PgGrantRow[]>`UPDATE grants
        SET revoked_at = ${w.at}, revoked_by = ${w.by}, revoke_reason = ${w.reason}
        WHERE ${mine} AND revoked_at IS NULL RETURNING *`;
    }
    const live = tx`${mine} AND revoked_at IS NULL AND approved_at IS NOT NULL
      AND expires_at > ${w.at}`;
    if (w.kind === "capture" || w.mode === "once") {
      return tx<PgGrantRow[]>`UPDATE grants
        SET used_at = ${w.at}, last_redeemed_at = ${w.at}, redemptions = redemptions + 1
        WHERE ${live} AND used_at IS NULL RETURNING *`;
    }
    if (w.mode === "session") {
      return tx<PgGrantRow[]>`UPDATE grants
        SET session_id = coalesce(session_id, ${w.sessionId}),
          used_at = coalesce(used_at, ${w.at}), last_redeemed_at = ${w.at},
          redemptions = redemptions + 1
        WHERE ${live} AND (session_id IS NULL OR session_id = ${w.sessionId})
        RETURNING *`;
    }
    return tx<PgGrantRow[]>`UPDATE grants
      SET used_at = coalesce(used_at, ${w.at}), last_redeemed_at = ${w.at},
        redemptions = redemptions + 1
      WHERE ${live} RETURNING *`;
  }
}

/** A client row as the record `toGrantRecord()` reads (a damaged time reads as invalid). */
function record(r: PgGrantRow): GrantRecord {
  const time = (d: Date | null): string | null =>
    d === null ? null : Number.isNaN(d.getTime()) ? "invalid" : d.toISOString();
  const row: GrantRow = {
    id: r.id,
    secret_id: r.secret_id,
    agent: r.agent,
    purpose: r.purpose,
    mode: r.mode,
    uses: typeof r.uses === "string" ? r.uses : JSON.stringify(r.uses),
    expires_at: time(r.expires_at)!,
    created_at: time(r.created_at)!,
    created_by: r.created_by,
    approved_at: time(r.approved_at),
    approved_by: r.approved_by,
    revoked_at: time(r.revoked_at),
    revoked_by: r.revoked_by,
    revoke_reason: r.revoke_reason,
    session_id: r.session_id,
    used_at: time(r.used_at),
    last_redeemed_at: time(r.last_redeemed_at),
    redemptions: Number(r.redemptions),
  };
  return toGrantRecord(row);
}
