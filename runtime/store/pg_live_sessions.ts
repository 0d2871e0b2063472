/**
 * Live sessions shared by every runtime, in PostgreSQL (`live_sessions`, under row-level
 * security): each runtime writes a row per session it holds and keeps its rows fresh with a
 * heartbeat; the console of any runtime lists the tenant's sessions of every runtime, and one
 * whose runtime stopped beating is shown as gone. A runtime's next start sweeps what its last
 * run left. A runtime is known to the database by the SHA-256 of a secret only it holds, so
 * its heartbeat, updates and sweep reach its own sessions and no one else's. The shared
 * store's adapter of `LiveSessionStore` (`live_sessions.ts`).
 *
 * @module
 */
import type {
  LiveSession,
  LiveSessionOpen,
  LiveSessionStore,
  LiveSessionUpdate,
} from "./live_sessions.ts";
import type { PgDatabase } from "./pg_database.ts";

/** How long a session's heartbeat may lapse before it is shown as gone (default). */
export const LIVE_LAPSE_MS = 30_000;

interface Row {
  id: string;
  runtime: string;
  agent: string | null;
  origin: string | null;
  actions_used: number;
  tainted: boolean;
  isolation: string;
  started_at: Date;
  heartbeat_at: Date;
  lapsed: boolean;
}

/** One runtime's view of the live sessions (the shared store's `LiveSessionStore`). */
export class PgLiveSessions implements LiveSessionStore {
  readonly #db: PgDatabase;
  readonly runtime: string;
  readonly #secret: string;
  readonly #lapseMs: number;

  /** `secret` is the runtime's own (kept in its data dir); `name` is shown to operators. */
  constructor(db: PgDatabase, runtime: { name: string; secret: string; lapseMs?: number }) {
    this.#db = db;
    this.runtime = runtime.name;
    this.#secret = runtime.secret;
    this.#lapseMs = runtime.lapseMs ?? LIVE_LAPSE_MS;
  }

  /** Records a session this runtime now holds. */
  async open(
    tenant: string,
    s: LiveSessionOpen,
  ): Promise<void> {
    await this.#db.tenant(
      tenant,
      (tx) =>
        tx`INSERT INTO live_sessions (tenant_id, id, runtime, runtime_key, agent, isolation,
          started_at, heartbeat_at)
        VALUES (${tenant}, ${s.id}, ${this.runtime}, live_key(${this.#secret}), ${s.agent},
          ${s.isolation}, ${s.startedAt}, now())`,
    );
  }

  /** What the console shows of one of this runtime's sessions; false when it holds none such. */
  async update(
    tenant: string,
    id: string,
    s: LiveSessionUpdate,
  ): Promise<boolean> {
    const [{ ok }] = await this.#db.tenant(
      tenant,
      (tx) =>
        tx<{ ok: boolean }[]>`SELECT live_update(${this.#secret}, ${id}, ${s.origin},
        ${s.actionsUsed}, ${s.tainted}) AS ok`,
    );
    return ok;
  }

  /** Removes a session of this runtime that ended. */
  async end(tenant: string, id: string): Promise<boolean> {
    const [{ ok }] = await this.#db.tenant(
      tenant,
      (tx) => tx<{ ok: boolean }[]>`SELECT live_end(${this.#secret}, ${id}) AS ok`,
    );
    return ok;
  }

  /**
   * Asks the runtime holding session `id` of `tenant` to end it (a console's kill on another
   * runtime); false when the tenant has no such session.
   */
  async kill(tenant: string, id: string): Promise<boolean> {
    const [{ ok }] = await this.#db.tenant(
      tenant,
      (tx) => tx<{ ok: boolean }[]>`SELECT live_kill(${id}) AS ok`,
    );
    return ok;
  }

  /** The ids of this runtime's sessions a console asked to end. */
  async killed(): Promise<string[]> {
    const rows = await this.#db.transaction((tx) =>
      tx<{ id: string }[]>`SELECT live_killed(${this.#secret}) AS id`
    );
    return rows.map((r) => r.id);
  }

  /** Keeps every session of this runtime fresh; returns how many. */
  async heartbeat(): Promise<number> {
    const [{ n }] = await this.#db.transaction((tx) =>
      tx<{ n: number }[]>`SELECT live_heartbeat(${this.#secret}) AS n`
    );
    return n;
  }

  /** Removes what this runtime's last run left (at start); returns how many. */
  async sweep(): Promise<number> {
    const [{ n }] = await this.#db.transaction((tx) =>
      tx<{ n: number }[]>`SELECT live_sweep(${this.#secret}) AS n`
    );
    return n;
  }

  /** The tenant's sessions on every runtime, oldest first. */
  async list(tenant: string): Promise<LiveSession[]> {
    const rows = await this.#db.tenant(
      tenant,
      (tx) =>
        tx<Row[]>`SELECT id, runtime, agent, origin, actions_used, tainted, isolation, started_at,
          heartbeat_at, heartbeat_at < now() - ${this.#lapseMs / 1000} * interval '1 second'
            AS lapsed
        FROM live_sessions WHERE tenant_id = ${tenant} ORDER BY started_at, id`,
    );
    return rows.map((r) => ({
      id: r.id,
      runtime: r.runtime,
      agent: r.agent,
      origin: r.origin,
      actionsUsed: r.actions_used,
      tainted: r.tainted,
      isolation: r.isolation,
      startedAt: r.started_at.toISOString(),
      heartbeatAt: r.heartbeat_at.toISOString(),
      gone: r.lapsed,
    }));
  }
}
