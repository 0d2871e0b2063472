/**
 * Grants as a port: the `grants` rows of one tenant, read and written the same way whichever
 * database holds them. The rules (what may be added, approved, redeemed, captured, and which
 * audit row each step writes) are not here: they are `runtime/grants/grants.ts`, the one flow
 * over this port. A store only keeps records and makes a check and its write one step:
 * `change()` locks the rows it selects, lets the caller's plan judge them (synchronously,
 * nothing else runs meanwhile), and applies the plan's conditional writes before anyone else
 * reads the rows.
 *
 * `SqliteGrantStore` (`sqlite_grant_store.ts`) is the embedded adapter (one tenant);
 * `PgGrantStore` (`pg_grant_store.ts`) keeps every tenant's grants in PostgreSQL. One
 * contract suite (`grant_store_contract_test.ts`) runs the grants' flow against both.
 *
 * Records are snake_case (`secret_id`, `allowed_origins`, `expires_at`) because they are the
 * wire and table shape the console's API returns as is.
 *
 * @module
 */

/**
 * How often a grant may be redeemed: `once` (one successful redemption ever), `session`
 * (every redemption of the first session that redeems it, no other session's), `standing`
 * (until expiry or revocation).
 */
export const GRANT_MODES = ["once", "session", "standing"] as const;
/** One grant mode. */
export type GrantMode = typeof GRANT_MODES[number];

/** What a use lets the runtime do with the secret: type it into a page, or write into it. */
export const USE_KINDS = ["fill", "capture"] as const;
/** One use kind. */
export type UseKind = typeof USE_KINDS[number];

/**
 * One use of a grant: its kind and the exact origins (normalized) it may happen on. A
 * `capture` use also binds the workflow that may write and the output it writes (`github_app`
 * and `pem`); a `fill` use has neither.
 */
export interface GrantUse {
  readonly kind: UseKind;
  readonly allowed_origins: readonly string[];
  /** A capture use's workflow (`github_app`); absent on a fill use. */
  readonly workflow?: string;
  /** A capture use's output (`pem`, `client_secret`); absent on a fill use. */
  readonly output?: string;
}

/** A grant as stored (never a secret value: the vault keeps those). */
export interface GrantRecord {
  /** `g_` and 16 base32 characters (80 random bits): not guessable, safe in a path. */
  readonly id: string;
  readonly secret_id: string;
  readonly agent: string;
  readonly purpose: string;
  readonly mode: GrantMode;
  readonly uses: readonly GrantUse[];
  /** ISO time. */
  readonly expires_at: string;
  readonly created_at: string;
  /** The door it came through: `cli`, `console`, `api`. */
  readonly created_by: string;
  readonly approved_at: string | null;
  readonly approved_by: string | null;
  readonly revoked_at: string | null;
  readonly revoked_by: string | null;
  /** `GRANT_REVOKED` (an operator), `SECRET_REMOVED` (its secret left the vault), … */
  readonly revoke_reason: string | null;
  /** The session a `session` grant is bound to (its first redemption's). */
  readonly session_id: string | null;
  /** The first successful redemption. */
  readonly used_at: string | null;
  readonly last_redeemed_at: string | null;
  readonly redemptions: number;
}

/** A record to insert: what is known when a grant is added. */
export type NewGrantRecord = Pick<
  GrantRecord,
  | "id"
  | "secret_id"
  | "agent"
  | "purpose"
  | "mode"
  | "uses"
  | "expires_at"
  | "created_at"
  | "created_by"
  | "approved_at"
  | "approved_by"
>;

/** Which grants `list()` returns: all, or those of one secret and/or one agent. */
export interface GrantListFilter {
  secretId?: string;
  agent?: string;
}

/** The rows a `change()` locks: these ids, or every grant of one agent (oldest first). */
export type GrantSelect = { readonly ids: readonly string[] } | { readonly agent: string };

/**
 * One conditional write of a `change()`. Each repeats its checks in its own condition, so a
 * write the plan decided on a stale view matches nothing (the `change()` reports it):
 * - `approve`: not approved, not revoked;
 * - `revoke`: not revoked;
 * - `redeem`: live (not revoked, approved, `expires_at > at`), and by mode: `once` not used;
 *   `session` unbound or bound to `sessionId` (bound to it now); `standing` nothing more;
 * - `capture`: live and not used.
 *
 * `at` is the ISO time written (and the expiry compared against).
 */
export type GrantWrite =
  | { readonly kind: "approve"; readonly id: string; readonly by: string; readonly at: string }
  | {
    readonly kind: "revoke";
    readonly id: string;
    readonly by: string;
    readonly reason: string;
    readonly at: string;
  }
  | {
    readonly kind: "redeem";
    readonly id: string;
    readonly mode: GrantMode;
    readonly sessionId: string;
    readonly at: string;
  }
  | { readonly kind: "capture"; readonly id: string; readonly at: string };

/** What a plan decided: the writes to make (in order) and what to hand back. */
export interface GrantPlan<T> {
  readonly writes: readonly GrantWrite[];
  readonly result: T;
}

/** What a `change()` did: the plan's result and each write's record after it. */
export interface GrantChange<T> {
  readonly result: T;
  /** Per write, in order: the record after it, or undefined when its condition failed. */
  readonly written: readonly (GrantRecord | undefined)[];
}

/**
 * One tenant's grant records. Every method rejects with the database's own error when the
 * rows cannot be read or written (the grants' flow turns that into `GRANTS_UNAVAILABLE`),
 * and with what the plan threw (nothing written then).
 */
export interface GrantStore {
  /** Keeps a new grant; its record as stored. */
  insert(record: NewGrantRecord): Promise<GrantRecord>;
  /** The grant `id`, or undefined. */
  get(id: string): Promise<GrantRecord | undefined>;
  /** The grants among `ids` that exist (any order). */
  find(ids: readonly string[]): Promise<GrantRecord[]>;
  /** Every grant (optionally of one secret or agent), newest first. */
  list(filter?: GrantListFilter): Promise<GrantRecord[]>;
  /**
   * Locks the selected rows, runs `plan` over them, applies its writes, in one transaction:
   * a redemption on another runtime of the tenant waits, then reads what this one wrote.
   */
  change<T>(
    select: GrantSelect,
    plan: (records: GrantRecord[]) => GrantPlan<T>,
  ): Promise<GrantChange<T>>;
  /**
   * Revokes every grant of `secretId` that is not revoked yet (its secret left the vault);
   * their records after, oldest first.
   */
  revokeForSecret(secretId: string, by: string, reason: string, at: string): Promise<GrantRecord[]>;
}
