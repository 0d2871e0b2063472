/**
 * Logged-in console sessions: a random id in an HttpOnly cookie, ended after 12 hours without
 * a request. Each carries its own CSRF token. `OperatorSessionStore` is the port the console
 * awaits; `OperatorSessions` keeps them in memory (a restart logs everyone out, and each
 * runtime has its own), the shared store's adapter (`runtime/store/pg_operator_sessions.ts`)
 * in PostgreSQL for every runtime of a tenant.
 *
 * @module
 */
import { randomToken } from "./secrets.ts";

/** One logged-in operator's session. */
export interface OperatorSession {
  readonly id: string;
  /** Sent back with every state change (hidden `csrf` field or `X-CSRF-Token`). */
  readonly csrf: string;
  /** When it was last used (ms since the epoch, on the store's clock). */
  lastSeen: number;
}

/**
 * Where the console's sessions are kept. A store that cannot answer fails closed: no
 * session (`undefined`, `false`), never an exception, so the caller answers 401, a redirect
 * to the login form, or 503, never a 500.
 */
export interface OperatorSessionStore {
  /** Starts a session; undefined when it could not be kept (the store is unreachable). */
  create(): Promise<OperatorSession | undefined>;
  /**
   * The live session `id`, its idle clock restarted; undefined when unknown, idle too long
   * (it is then gone for good), or the store cannot tell.
   */
  touch(id: string | undefined): Promise<OperatorSession | undefined>;
  /**
   * Whether session `id` is live, without counting this as use (a long-open event stream);
   * false when the store cannot tell.
   */
  alive(id: string | undefined): Promise<boolean>;
  /** Ends session `id` (logout): true once it is gone, false when the store could not be reached. */
  end(id: string): Promise<boolean>;
}

/** Options of `OperatorSessions`. */
export interface OperatorSessionOptions {
  /** A session unused this long ends; default 12 hours. */
  idleMs?: number;
  /** At most this many at once; the least recently used goes first. Default 32. */
  max?: number;
  now?: () => number;
}

/** A session's idle limit unless told otherwise: 12 hours. */
export const OPERATOR_SESSION_IDLE_MS = 12 * 3_600_000;

/** Sessions kept at once unless told otherwise (the least recently used goes first). */
export const OPERATOR_SESSION_MAX = 32;

/** The console's sessions, in this process's memory. */
export class OperatorSessions implements OperatorSessionStore {
  readonly #idleMs: number;
  readonly #max: number;
  readonly #now: () => number;
  /** In order of last use, oldest first (a Map keeps insertion order). */
  readonly #sessions = new Map<string, OperatorSession>();

  constructor(options: OperatorSessionOptions = {}) {
    this.#idleMs = options.idleMs ?? OPERATOR_SESSION_IDLE_MS;
    this.#max = Math.max(1, options.max ?? OPERATOR_SESSION_MAX);
    this.#now = options.now ?? Date.now;
  }

  /** Starts a session (memory never fails to keep one). */
  create(): Promise<OperatorSession> {
    const session: OperatorSession = {
      id: randomToken(),
      csrf: randomToken(),
      lastSeen: this.#now(),
    };
    this.#sessions.set(session.id, session);
    for (const id of this.#sessions.keys()) {
      if (this.#sessions.size <= this.#max) break;
      this.#sessions.delete(id);
    }
    return Promise.resolve(session);
  }

  /** The live session `id`, its idle clock restarted; undefined when unknown or idle too long. */
  touch(id: string | undefined): Promise<OperatorSession | undefined> {
    const session = this.peek(id);
    if (session) {
      session.lastSeen = this.#now();
      this.#sessions.delete(session.id);
      this.#sessions.set(session.id, session);
    }
    return Promise.resolve(session);
  }

  /** Whether session `id` is live, without counting this as use. */
  alive(id: string | undefined): Promise<boolean> {
    return Promise.resolve(this.peek(id) !== undefined);
  }

  /** Ends session `id`. */
  end(id: string): Promise<boolean> {
    this.delete(id);
    return Promise.resolve(true);
  }

  /**
   * The live session `id` without counting this as use, answered at once (memory only: a
   * caller that may be handed a shared store awaits `alive()`).
   */
  peek(id: string | undefined): OperatorSession | undefined {
    if (!id) return undefined;
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    if (this.#now() - session.lastSeen > this.#idleMs) {
      this.#sessions.delete(id);
      return undefined;
    }
    return session;
  }

  /** Ends session `id`, at once (memory only; `end()` is the port's). */
  delete(id: string): void {
    this.#sessions.delete(id);
  }
}
