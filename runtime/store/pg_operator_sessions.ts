/**
 * The console's login sessions shared by every runtime of a tenant, in PostgreSQL
 * (`operator_sessions`, under row-level security, reached through four functions): an
 * operator logged in through one runtime of a load-balanced pair is logged in on the other,
 * and a logout on either ends the session on both. The idle clock is the database's.
 *
 * The database holds only the SHA-256 of a session's id, so none of its readers can ride a
 * session: the id (the cookie's value) is hashed here and never sent. The CSRF token is not
 * stored at all: it is derived from the id (HMAC-SHA-256 keyed by the id), so every runtime
 * computes the same token for the session, and a reader of the database, who would hold the
 * one value a forged cross-site form needs were it stored, learns nothing of it.
 *
 * It fails closed: a database that cannot answer is no session (`undefined`, `false`), never
 * an exception, so the console answers a redirect to the login form, 401 or 503, not 500.
 *
 * This is the console's `OperatorSessionStore` (ui/operator_sessions.ts): runtime/store/ may
 * not import ui/, so it meets the port by its shape, and its test checks it does.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash, createHmac } from "node:crypto";
import { errorCode, OmotaiError } from "../mod.ts";
import type { PgDatabase, PgTx } from "./pg_database.ts";
import { TENANT_ID } from "./tenant.ts";

/** One logged-in operator's session (the shape of ui/'s `OperatorSession`). */
export interface PgOperatorSession {
  readonly id: string;
  readonly csrf: string;
  /** Its last use, ms since the epoch on the database's clock. */
  lastSeen: number;
}

/** Options of `PgOperatorSessions`. */
export interface PgOperatorSessionOptions {
  /** A session unused this long ends; default 12 hours. */
  idleMs?: number;
  /** At most this many per tenant (1 to 1000); the least recently used go first. Default 32. */
  max?: number;
  /** Told the code of each database failure (the session was refused); default: nobody. */
  onError?: (code: string) => void;
}

/** A cookie longer than this is no session id of ours (and is not hashed). */
const MAX_ID_LENGTH = 256;

/** The SHA-256 of a session id, as the database knows it (hex). */
export function operatorSessionHash(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("hex");
}

/** The CSRF token of session `id`: HMAC-SHA-256 keyed by the id (base64url). */
export function operatorSessionCsrf(id: string): string {
  return createHmac("sha256", id).update("omotai console csrf v1").digest("base64url");
}

/** One tenant's console sessions, for one runtime's console. */
export class PgOperatorSessions {
  readonly #db: PgDatabase;
  readonly #tenant: string;
  readonly #idleMs: number;
  readonly #max: number;
  readonly #onError: (code: string) => void;

  constructor(db: PgDatabase, tenant: string, options: PgOperatorSessionOptions = {}) {
    if (!TENANT_ID.test(tenant)) {
      throw new OmotaiError("BAD_TENANT", "a tenant id is 1-63 of a-z, 0-9, _ and -");
    }
    this.#db = db;
    this.#tenant = tenant;
    this.#idleMs = Math.max(1, Math.round(options.idleMs ?? 12 * 3_600_000));
    this.#max = Math.min(1000, Math.max(1, Math.floor(options.max ?? 32)));
    this.#onError = options.onError ?? (() => {});
  }

  /** Starts a session; undefined when the database cannot keep it. */
  async create(): Promise<PgOperatorSession | undefined> {
    const id = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
    const started = await this.#ask((tx) =>
      tx<{ at: number }[]>`SELECT operator_session_start(${operatorSessionHash(id)},
        ${this.#idleMs}, ${this.#max}) AS at`
    );
    if (started === undefined) return undefined;
    return { id, csrf: operatorSessionCsrf(id), lastSeen: started[0].at };
  }

  /**
   * The live session `id`, its idle clock restarted; undefined when unknown, idle too long
   * (then removed), another tenant's, or the database cannot answer.
   */
  async touch(id: string | undefined): Promise<PgOperatorSession | undefined> {
    if (!id || id.length > MAX_ID_LENGTH) return undefined;
    const rows = await this.#ask((tx) =>
      tx<{ at: number | null }[]>`SELECT operator_session_touch(${operatorSessionHash(id)},
        ${this.#idleMs}) AS at`
    );
    const at = rows?.[0]?.at;
    if (at === undefined || at === null) return undefined;
    return { id, csrf: operatorSessionCsrf(id), lastSeen: at };
  }

  /** Whether session `id` is live, without counting this as use; false when unsure. */
  async alive(id: string | undefined): Promise<boolean> {
    if (!id || id.length > MAX_ID_LENGTH) return false;
    const rows = await this.#ask((tx) =>
      tx<{ ok: boolean }[]>`SELECT operator_session_alive(${operatorSessionHash(id)},
        ${this.#idleMs}) AS ok`
    );
    return rows?.[0]?.ok === true;
  }

  /** Ends session `id` on every runtime: true once it is gone, false when the database is not reached. */
  async end(id: string): Promise<boolean> {
    if (!id || id.length > MAX_ID_LENGTH) return true;
    const rows = await this.#ask((tx) =>
      tx<{ ok: boolean }[]>`SELECT operator_session_end(${operatorSessionHash(id)}) AS ok`
    );
    return rows !== undefined;
  }

  /** `query` as the tenant; undefined (reported by code) when the database fails. */
  async #ask<T>(query: (tx: PgTx) => Promise<T>): Promise<T | undefined> {
    try {
      return await this.#db.tenant(this.#tenant, query);
    } catch (err) {
      this.#onError(errorCode(err) ?? "ERROR");
      return undefined;
    }
  }
}
