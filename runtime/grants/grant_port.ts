/**
 * Grants as a port: add, approve, revoke, list and redeem one tenant's grants, and check and
 * consume its capture grants, the same way
 * whichever database holds them. `sqliteGrantPort` wraps the embedded `GrantStore` (one
 * tenant); `PgGrantStore` (`pg_grant_store.ts`) keeps every tenant's grants in PostgreSQL.
 * One contract suite (`grant_store_contract_test.ts`) runs against both.
 *
 * @module
 */
import { asPromise } from "../store/as_promise.ts";
import type { Grant } from "./grant.ts";
import type { GrantStore, OperatorOptions } from "./grant_store.ts";
import type { RedeemRequest } from "./redeem_checks.ts";
import type {
  CaptureCheckRequest,
  CaptureConsumeRequest,
  CaptureTarget,
} from "./capture_checks.ts";

/** Which grants `list()` returns: all, or those of one secret and/or one agent. */
export interface GrantListFilter {
  secretId?: string;
  agent?: string;
}

/**
 * One tenant's grants: `GrantStore`'s public methods, asynchronous. Every method rejects with
 * the `GrantError` the embedded store throws for the same call.
 */
export interface GrantPort {
  /** Adds a grant from untrusted input: pending, or approved at once with `approve`. */
  add(input: unknown, options?: OperatorOptions & { approve?: boolean }): Promise<Grant>;
  /** Approves a pending grant. */
  approve(id: string, options?: OperatorOptions): Promise<Grant>;
  /** Revokes a grant that is not revoked yet. */
  revoke(id: string, options?: OperatorOptions): Promise<Grant>;
  /** Revokes every live grant of `secretId` (its secret leaves the vault); how many. */
  revokeForSecret(secretId: string, options?: OperatorOptions): Promise<number>;
  /** Every grant (optionally of one secret or agent), newest first. */
  list(filter?: GrantListFilter): Promise<Grant[]>;
  /** The grant `id`, or undefined. */
  get(id: string): Promise<Grant | undefined>;
  /**
   * Redeems fill grants for one fill (all named pass, or none); the redeemed grants. A capture
   * grant is refused here (`GRANT_WRONG_USE`).
   */
  redeem(request: RedeemRequest): Promise<Grant[]>;
  /**
   * Checks a capture before anything is minted, writing no grant and no secret (audit rows
   * only): every output's capture grant and its empty target. Where each output goes, or the
   * first failing output's refusal. A fill grant is refused here (`GRANT_WRONG_USE`).
   */
  checkCapture(request: CaptureCheckRequest, now?: number): Promise<CaptureTarget[]>;
  /** Marks a capture grant used after its value was written (once); the used grant. */
  consumeCapture(grantId: string, request: CaptureConsumeRequest, now?: number): Promise<Grant>;
}

/** The embedded SQLite grants as a `GrantPort`: each call answers at once; a throw rejects. */
export function sqliteGrantPort(store: GrantStore): GrantPort {
  return {
    add: (input, options) => asPromise(() => store.add(input, options)),
    approve: (id, options) => asPromise(() => store.approve(id, options)),
    revoke: (id, options) => asPromise(() => store.revoke(id, options)),
    revokeForSecret: (secretId, options) =>
      asPromise(() => store.revokeForSecret(secretId, options)),
    list: (filter) => asPromise(() => store.list(filter)),
    get: (id) => asPromise(() => store.get(id)),
    redeem: (request) => asPromise(() => store.redeem(request)),
    checkCapture: (request, now) => asPromise(() => store.checkCapture(request, now)),
    consumeCapture: (grantId, request, now) =>
      asPromise(() => store.consumeCapture(grantId, request, now)),
  };
}
