/**
 * The shared store in PostgreSQL (`--database postgres://…`): a bounded pool on the
 * maintained `postgres` client (no native code, parameters always bound, LISTEN/NOTIFY
 * built in). Every query a runtime makes runs in a transaction that first sets
 * `app.tenant_id` with `set_config(…, true)` (`SET LOCAL`): row-level security on every
 * table reads it, so no query path can run without a tenant. The runtime's role must be
 * neither a superuser, nor `BYPASSRLS`, nor the tables' owner: `open()` refuses one that is.
 * A query that fails or outlasts its bound is `DB_UNAVAILABLE` (callers deny); the pool
 * reconnects by itself when the server is back.
 *
 * @module
 */
import postgres from "postgres";
import { errorCode, OmotaiError } from "../mod.ts";
import { bounded } from "./bounded.ts";
import { PG_MIGRATIONS } from "./pg_migrations.ts";
import { TENANT_ID } from "./tenant.ts";

/** A transaction with its tenant set. */
export type PgTx = postgres.TransactionSql;
/** The pool itself, for a statement that runs on its own (`PgDatabase.statement`). */
export type PgSql = postgres.Sql;

/** How to reach the database. */
export interface PgOptions {
  url: string;
  /** Connections in the pool (default 10). */
  max?: number;
  /** A statement running longer is cancelled, and the caller denies (default 5 s). */
  statementTimeoutMs?: number;
  /** Seconds to wait for a connection to open (default 5). */
  connectTimeoutS?: number;
}

/** One pool to one database. */
export class PgDatabase implements AsyncDisposable {
  readonly #sql: postgres.Sql;
  /** How long one transaction may take, all in (the server's bounds, a connect, slack). */
  readonly #boundMs: number;

  private constructor(sql: postgres.Sql, boundMs: number) {
    this.#sql = sql;
    this.#boundMs = boundMs;
  }

  /**
   * Opens a pool. `role: "runtime"` (the default) checks the role may not read past its
   * tenant; `role: "owner"` is for migrations and the operator's tenant commands.
   */
  static async open(
    options: PgOptions,
    role: "runtime" | "owner" = "runtime",
  ): Promise<PgDatabase> {
    let sql: postgres.Sql;
    try {
      sql = postgres(options.url, {
        max: options.max ?? 10,
        connect_timeout: options.connectTimeoutS ?? 5,
        idle_timeout: 30,
        // Reconnects after an outage soon and never more than a second apart (the driver's
        // own backoff grows to 20 s, and a query waits behind it: a deny that late is a hang).
        backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
        onnotice: () => {},
        connection: {
          application_name: "omotai",
          // Pinned at connect, over any ALTER ROLE … SET a compromised runtime could make: the
          // schema it reads, row-level security on, and writable statements (every
          // transaction is begun READ WRITE, and an append runs as a statement of its own).
          search_path: "public",
          row_security: "on",
          // The driver types this one boolean and drops `false` unsent: the server gets `off`.
          default_transaction_read_only: "off" as unknown as boolean,
          statement_timeout: options.statementTimeoutMs ?? 5_000,
          lock_timeout: options.statementTimeoutMs ?? 5_000,
          idle_in_transaction_session_timeout: 30_000,
        },
      });
    } catch (err) {
      throw unavailable(err);
    }
    // The server bounds each statement; this bounds what it cannot see: a connection that
    // went silent, a wait for a free one in a full pool.
    const db = new PgDatabase(
      sql,
      (options.statementTimeoutMs ?? 5_000) * 2 + (options.connectTimeoutS ?? 5) * 1000 + 2_000,
    );
    try {
      if (role === "runtime") await db.#checkRuntimeRole();
    } catch (err) {
      await db[Symbol.asyncDispose]();
      throw err;
    }
    return db;
  }

  /** Runs `fn` in one transaction as `tenant` (row-level security reads it). */
  async tenant<T>(tenant: string, fn: (tx: PgTx) => Promise<T>): Promise<T> {
    if (!TENANT_ID.test(tenant)) {
      throw new OmotaiError("BAD_TENANT", "a tenant id is 1-63 of a-z, 0-9, _ and -");
    }
    try {
      return await this.#bounded(this.#sql.begin("read write", async (tx) => {
        // Sent, not awaited: the connection runs its queries in order, so the tenant is set
        // before `fn`'s first query, which goes out with it (one round trip fewer). Should it
        // fail, the transaction is aborted and `fn`'s queries fail with it.
        const setting = tx`SELECT set_config('app.tenant_id', ${tenant}, true)`;
        setting.catch(() => {});
        const result = await fn(tx);
        await setting;
        return result;
      }) as Promise<T>);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /**
   * Runs `fn`'s one statement on its own, committed as it returns (no transaction around it:
   * one round trip). Only for a statement that names its tenant itself (`audit_append`).
   */
  async statement<T>(fn: (sql: PgSql) => Promise<T>): Promise<T> {
    try {
      return await this.#bounded(fn(this.#sql));
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Runs `fn` in one transaction with no tenant (the owner's own work, or a test's). */
  async transaction<T>(fn: (tx: PgTx) => Promise<T>): Promise<T> {
    try {
      return await this.#bounded(this.#sql.begin("read write", fn) as Promise<T>);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** Applies the migrations this database has not had yet; returns its schema version. */
  async migrate(): Promise<number> {
    const once = () =>
      this.transaction(async (tx) => {
        await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
          version integer PRIMARY KEY,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`;
        // Two migrators at once: one migrates, the other waits and finds it done. A lock on
        // the owner's own table, not an advisory lock any role could hold to stall it.
        await tx`LOCK TABLE schema_migrations IN SHARE ROW EXCLUSIVE MODE`;
        const [{ v }] = await tx<{ v: number }[]>`
          SELECT coalesce(max(version), 0)::int AS v FROM schema_migrations`;
        if (v > PG_MIGRATIONS.length) {
          throw new OmotaiError(
            "DB_TOO_NEW",
            `the database's schema is version ${v}; this build knows ${PG_MIGRATIONS.length}: upgrade omotai`,
          );
        }
        for (let i = v; i < PG_MIGRATIONS.length; i++) {
          await tx.unsafe(PG_MIGRATIONS[i]);
          await tx`INSERT INTO schema_migrations (version) VALUES (${i + 1})`;
        }
        return PG_MIGRATIONS.length;
      });
    // The very first two, racing to create the table itself: the loser tries once more.
    return await once().catch(() => once());
  }

  /**
   * Calls `fn` with each notification on `channel` (a connection of its own, re-established
   * by the client after a loss); resolves once listening. The returned function stops it.
   */
  async listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>> {
    try {
      const { unlisten } = await this.#sql.listen(channel, fn);
      return async () => await unlisten().catch(() => {});
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** `work`, or `DB_UNAVAILABLE` once it outlasts the bound (it may still finish; nobody waits). */
  #bounded<T>(work: Promise<T>): Promise<T> {
    return bounded(work, this.#boundMs);
  }

  /** Closes the pool (waits up to 5 s for running queries). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.#sql.end({ timeout: 5 }).catch(() => {});
  }

  async #checkRuntimeRole(): Promise<void> {
    const [role] = await this.transaction((tx) =>
      tx<{ rolsuper: boolean; rolbypassrls: boolean; owns: boolean }[]>`
        SELECT r.rolsuper, r.rolbypassrls,
          -- MEMBER, not USAGE: a NOINHERIT member can still SET ROLE to what it is in.
          EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                  WHERE n.nspname = current_schema() AND c.relkind = 'r'
                    AND pg_has_role(current_user, c.relowner, 'MEMBER'))
          OR EXISTS (SELECT 1 FROM pg_roles r2 WHERE (r2.rolsuper OR r2.rolbypassrls)
                  AND r2.rolname <> current_user
                  AND pg_has_role(current_user, r2.oid, 'MEMBER')) AS owns
        FROM pg_roles r WHERE r.rolname = current_user`
    );
    if (!role || role.rolsuper || role.rolbypassrls || role.owns) {
      throw new OmotaiError(
        "DB_ROLE_UNSAFE",
        "the runtime's database role must not be a superuser, have BYPASSRLS or own the tables: row-level security would not hold (docs/deploy.md)",
      );
    }
  }
}

/**
 * A failed database call (`DB_UNAVAILABLE`), with the server's SQLSTATE when it answered one.
 * Its message is the code or a trigger's own refusal, never the server's text (which can quote
 * the values sent).
 */
export class PgError extends OmotaiError {
  /** The server's SQLSTATE, or the client's code (`ECONNREFUSED`, `CONNECTION_CLOSED`, …). */
  readonly sqlState: string | undefined;

  constructor(message: string, sqlState?: string) {
    super("DB_UNAVAILABLE", message);
    this.sqlState = sqlState;
  }

  /**
   * Whether the server answered and refused a value it was sent: a data exception (SQLSTATE
   * class 22: text it cannot hold, a number out of range) or a missing value (23502). The same
   * values fail the same way again; the server is up and takes others. Not the other
   * constraints: an unknown tenant (23503) or a broken link (23514) refuses every row alike.
   */
  get refused(): boolean {
    return /^22[0-9A-Z]{3}$/.test(this.sqlState ?? "") || this.sqlState === "23502";
  }
}

/**
 * A database failure as the runtime's code: a coded error passes; anything else is
 * `DB_UNAVAILABLE` with PostgreSQL's error code only (its message may quote row values).
 */
function unavailable(err: unknown): OmotaiError {
  if (err instanceof OmotaiError) return err;
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : "";
  // A trigger's own refusal names itself; it carries no row data.
  const own = /^((?:AUDIT|TENANT|APPROVAL|QUESTION|GRANT)_[A-Z_]+): [\w ,.'()-]{0,200}$/.exec(
    message,
  );
  return new PgError(
    own ? own[0] : `the database did not answer (${code ?? "ERROR"})`,
    code,
  );
}
