/**
 * The live sessions' port: what a runtime writes of the sessions it holds (a row each, opened,
 * brought up to date and ended by `cli/live_mirror.ts`'s beat, kept fresh by its heartbeat)
 * and what the console reads and asks of them (the tenant's sessions, a kill). Two adapters:
 * `MemoryLiveSessions` here (the embedded store: one runtime, whose rows are all its own and
 * never gone) and `PgLiveSessions` (the shared store: every runtime of the tenant, one whose
 * heartbeat lapsed shown as gone). One contract runs over both
 * (`live_sessions_contract_test.ts`).
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";

/** One live session, as the console lists it. */
export interface LiveSession {
  id: string;
  /** The runtime holding it (its name, for show). */
  runtime: string;
  agent: string | null;
  origin: string | null;
  actionsUsed: number;
  tainted: boolean;
  isolation: string;
  startedAt: string;
  heartbeatAt: string;
  /** Its runtime's heartbeat lapsed: the runtime is gone, and so is the session. */
  gone: boolean;
}

/** A session as it opens. */
export interface LiveSessionOpen {
  id: string;
  agent: string | null;
  isolation: string;
  /** ISO time. */
  startedAt: string;
}

/** What changes of a session while it runs. */
export interface LiveSessionUpdate {
  origin: string | null;
  actionsUsed: number;
  tainted: boolean;
}

/**
 * One runtime's view of the live sessions. `tenant` is the one the runtime serves: its own
 * sessions (`open`, `update`, `end`) are found by this runtime and id, the tenant's (`list`,
 * `kill`) by the tenant.
 */
export interface LiveSessionStore {
  /** This runtime's name, as the rows of its sessions carry it. */
  readonly runtime: string;
  /** Records a session this runtime now holds (refused when the tenant has one of that id). */
  open(tenant: string, s: LiveSessionOpen): Promise<void>;
  /** What the console shows of one of this runtime's sessions; false when it holds none such. */
  update(tenant: string, id: string, s: LiveSessionUpdate): Promise<boolean>;
  /** Removes a session of this runtime that ended; false when it holds none such. */
  end(tenant: string, id: string): Promise<boolean>;
  /**
   * Asks the runtime holding session `id` of `tenant` to end it (its row is marked, and its
   * holder reads the mark with `killed`); false when the tenant has no such session.
   */
  kill(tenant: string, id: string): Promise<boolean>;
  /** The ids of this runtime's sessions a console asked to end. */
  killed(): Promise<string[]>;
  /** Keeps every session of this runtime fresh; returns how many. */
  heartbeat(): Promise<number>;
  /** Removes every session of this runtime (at start: what its last run left); returns how many. */
  sweep(): Promise<number>;
  /** The tenant's sessions on every runtime, oldest first (by start, then id). */
  list(tenant: string): Promise<LiveSession[]>;
}

/** A session opened twice (the embedded store's refusal; PostgreSQL's is its unique key's). */
export class LiveSessionError extends OmotaiError<"LIVE_SESSION_EXISTS"> {}

interface MemoryRow {
  tenant: string;
  session: LiveSession;
  killed: boolean;
}

/**
 * The embedded store's live sessions, in memory: one runtime, so every row is its own and
 * none is ever gone (there is no other runtime whose heartbeat could lapse), and a kill is
 * read by the same runtime's next beat. Nothing outlives the process, so `sweep` finds only
 * what this run wrote.
 */
export class MemoryLiveSessions implements LiveSessionStore {
  readonly runtime: string;
  /** Rows by tenant and id. */
  readonly #rows = new Map<string, MemoryRow>();
  readonly #now: () => number;

  constructor(runtime: { name: string; now?: () => number }) {
    this.runtime = runtime.name;
    this.#now = runtime.now ?? Date.now;
  }

  open(tenant: string, s: LiveSessionOpen): Promise<void> {
    const key = rowKey(tenant, s.id);
    if (this.#rows.has(key)) {
      return Promise.reject(
        new LiveSessionError("LIVE_SESSION_EXISTS", `session ${s.id} is already open`),
      );
    }
    this.#rows.set(key, {
      tenant,
      killed: false,
      session: {
        id: s.id,
        runtime: this.runtime,
        agent: s.agent,
        origin: null,
        actionsUsed: 0,
        tainted: false,
        isolation: s.isolation,
        startedAt: new Date(s.startedAt).toISOString(),
        heartbeatAt: this.#iso(),
        gone: false,
      },
    });
    return Promise.resolve();
  }

  update(tenant: string, id: string, s: LiveSessionUpdate): Promise<boolean> {
    const row = this.#rows.get(rowKey(tenant, id));
    if (row) {
      row.session = {
        ...row.session,
        origin: s.origin,
        actionsUsed: s.actionsUsed,
        tainted: s.tainted,
        heartbeatAt: this.#iso(),
      };
    }
    return Promise.resolve(row !== undefined);
  }

  end(tenant: string, id: string): Promise<boolean> {
    return Promise.resolve(this.#rows.delete(rowKey(tenant, id)));
  }

  kill(tenant: string, id: string): Promise<boolean> {
    const row = this.#rows.get(rowKey(tenant, id));
    if (row) row.killed = true;
    return Promise.resolve(row !== undefined);
  }

  killed(): Promise<string[]> {
    return Promise.resolve(
      [...this.#rows.values()].filter((r) => r.killed).map((r) => r.session.id),
    );
  }

  heartbeat(): Promise<number> {
    const at = this.#iso();
    for (const row of this.#rows.values()) row.session = { ...row.session, heartbeatAt: at };
    return Promise.resolve(this.#rows.size);
  }

  sweep(): Promise<number> {
    const n = this.#rows.size;
    this.#rows.clear();
    return Promise.resolve(n);
  }

  list(tenant: string): Promise<LiveSession[]> {
    const rows = [...this.#rows.values()].filter((r) => r.tenant === tenant).map((r) => ({
      ...r.session,
    }));
    rows.sort((a, b) =>
      a.startedAt < b.startedAt ? -1 : a.startedAt > b.startedAt ? 1 : a.id < b.id ? -1 : 1
    );
    return Promise.resolve(rows);
  }

  #iso(): string {
    return new Date(this.#now()).toISOString();
  }
}

/** A row's key: a tenant id has no newline. */
const rowKey = (tenant: string, id: string) => `${tenant}\n${id}`;
