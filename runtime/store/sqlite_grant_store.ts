/**
 * The embedded `GrantStore`: the `grants` table of the SQLite file (migration 3 of
 * `database.ts`), one tenant. A `change()` is one `BEGIN IMMEDIATE` transaction, so the check
 * and the write see the same table: another process redeeming the same grant waits for it.
 * Every call answers at once (the port's promises settle before anything else runs on the
 * connection).
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { asPromise } from "./as_promise.ts";
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

/** The grants of the embedded database. */
export class SqliteGrantStore implements GrantStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  insert(r: NewGrantRecord): Promise<GrantRecord> {
    return asPromise(() => {
      this.#db.prepare(
        `INSERT INTO grants (id, secret_id, agent, purpose, mode, uses, expires_at, created_at,
          created_by, approved_at, approved_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
      ).run(
        r.id,
        r.secret_id,
        r.agent,
        r.purpose,
        r.mode,
        JSON.stringify(r.uses),
        r.expires_at,
        r.created_at,
        r.created_by,
        r.approved_at,
        r.approved_by,
      );
      return this.#mustRead(r.id);
    });
  }

  get(id: string): Promise<GrantRecord | undefined> {
    return asPromise(() => this.#read(id));
  }

  find(ids: readonly string[]): Promise<GrantRecord[]> {
    return asPromise(() => this.#readIds(ids));
  }

  list(filter: GrantListFilter = {}): Promise<GrantRecord[]> {
    return asPromise(() =>
      (this.#db.prepare(
        `SELECT * FROM grants WHERE (?1 IS NULL OR secret_id = ?1) AND (?2 IS NULL OR agent = ?2)
          ORDER BY created_at DESC, rowid DESC`,
      ).all(filter.secretId ?? null, filter.agent ?? null) as unknown as GrantRow[])
        .map(toGrantRecord)
    );
  }

  change<T>(
    select: GrantSelect,
    plan: (records: GrantRecord[]) => GrantPlan<T>,
  ): Promise<GrantChange<T>> {
    return asPromise(() =>
      this.#transaction(() => {
        const records = "ids" in select
          ? this.#readIds(select.ids)
          : (this.#db.prepare("SELECT * FROM grants WHERE agent = ? ORDER BY created_at, rowid")
            .all(select.agent) as unknown as GrantRow[]).map(toGrantRecord);
        const { writes, result } = plan(records);
        const written = writes.map((w) => this.#write(w) ? this.#mustRead(w.id) : undefined);
        return { result, written };
      })
    );
  }

  revokeForSecret(
    secretId: string,
    by: string,
    reason: string,
    at: string,
  ): Promise<GrantRecord[]> {
    return asPromise(() =>
      this.#transaction(() => {
        const ids = (this.#db.prepare(
          "SELECT id FROM grants WHERE secret_id = ? AND revoked_at IS NULL ORDER BY created_at, rowid",
        ).all(secretId) as unknown as { id: string }[]).map((r) => r.id);
        for (const id of ids) this.#write({ kind: "revoke", id, by, reason, at });
        return ids.map((id) => this.#mustRead(id));
      })
    );
  }

  /** Makes one conditional write (see `GrantWrite`); whether its row matched. */
  #write(w: GrantWrite): boolean {
    const live = "revoked_at IS NULL AND approved_at IS NOT NULL AND expires_at > ?1";
    let sql: string;
    let args: (string | null)[];
    switch (w.kind) {
      case "approve":
        sql = `UPDATE grants SET approved_at = ?1, approved_by = ?2
          WHERE id = ?3 AND approved_at IS NULL AND revoked_at IS NULL`;
        args = [w.at, w.by, w.id];
        break;
      case "revoke":
        sql = `UPDATE grants SET revoked_at = ?1, revoked_by = ?2, revoke_reason = ?3
          WHERE id = ?4 AND revoked_at IS NULL`;
        args = [w.at, w.by, w.reason, w.id];
        break;
      case "capture":
        sql = `UPDATE grants SET used_at = ?1, last_redeemed_at = ?1, redemptions = redemptions + 1
          WHERE id = ?2 AND used_at IS NULL AND ${live}`;
        args = [w.at, w.id];
        break;
      case "redeem":
        if (w.mode === "once") {
          sql =
            `UPDATE grants SET used_at = ?1, last_redeemed_at = ?1, redemptions = redemptions + 1
            WHERE id = ?2 AND used_at IS NULL AND ${live}`;
          args = [w.at, w.id];
        } else if (w.mode === "session") {
          sql = `UPDATE grants SET session_id = COALESCE(session_id, ?3),
              used_at = COALESCE(used_at, ?1), last_redeemed_at = ?1, redemptions = redemptions + 1
            WHERE id = ?2 AND ${live} AND (session_id IS NULL OR session_id = ?3)`;
          args = [w.at, w.id, w.sessionId];
        } else {
          sql = `UPDATE grants SET used_at = COALESCE(used_at, ?1), last_redeemed_at = ?1,
              redemptions = redemptions + 1 WHERE id = ?2 AND ${live}`;
          args = [w.at, w.id];
        }
        break;
    }
    return Number(this.#db.prepare(sql).run(...args).changes) === 1;
  }

  #readIds(ids: readonly string[]): GrantRecord[] {
    return ids.map((id) => this.#read(id)).filter((r) => r !== undefined);
  }

  #read(id: string): GrantRecord | undefined {
    const row = this.#db.prepare("SELECT * FROM grants WHERE id = ?").get(id) as
      | GrantRow
      | undefined;
    return row ? toGrantRecord(row) : undefined;
  }

  #mustRead(id: string): GrantRecord {
    const record = this.#read(id);
    if (!record) throw new Error(`grant ${id} is gone from the table`);
    return record;
  }

  /** A write transaction (IMMEDIATE: the check and the write see the same table). */
  #transaction<T>(fn: () => T): T {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const value = fn();
      this.#db.exec("COMMIT");
      return value;
    } catch (err) {
      this.#db.exec("ROLLBACK");
      throw err;
    }
  }
}
