/**
 * Logged-in console sessions: a random id in an HttpOnly cookie, held in memory only (a
 * restart logs everyone out), ended after 12 hours without a request. Each carries its own
 * CSRF token.
 *
 * @module
 */
import { randomToken } from "./secrets.ts";

/** One logged-in operator's session. */
export interface OperatorSession {
  readonly id: string;
  /** Sent back with every state change (hidden `csrf` field or `X-CSRF-Token`). */
  readonly csrf: string;
  lastSeen: number;
}

/** Options of `OperatorSessions`. */
export interface OperatorSessionOptions {
  /** A session unused this long ends; default 12 hours. */
  idleMs?: number;
  /** At most this many at once; the least recently used goes first. Default 32. */
  max?: number;
  now?: () => number;
}

/** The console's sessions. */
export class OperatorSessions {
  readonly #idleMs: number;
  readonly #max: number;
  readonly #now: () => number;
  /** In order of last use, oldest first (a Map keeps insertion order). */
  readonly #sessions = new Map<string, OperatorSession>();

  constructor(options: OperatorSessionOptions = {}) {
    this.#idleMs = options.idleMs ?? 12 * 3_600_000;
    this.#max = Math.max(1, options.max ?? 32);
    this.#now = options.now ?? Date.now;
  }

  /** Starts a session. */
  create(): OperatorSession {
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
    return session;
  }

  /** The live session `id`, its idle clock restarted; undefined when unknown or idle too long. */
  touch(id: string | undefined): OperatorSession | undefined {
    const session = this.peek(id);
    if (!session) return undefined;
    session.lastSeen = this.#now();
    this.#sessions.delete(session.id);
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The live session `id` without counting this as use (a long-open event stream). */
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

  /** Ends session `id`. */
  delete(id: string): void {
    this.#sessions.delete(id);
  }
}
