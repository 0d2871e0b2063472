/**
 * The grants and the one place a grant is redeemed, over whichever `GrantStore` holds them
 * (`runtime/store/grant_store.ts`: SQLite or PostgreSQL). Operators add (pending, or approved
 * at once when they say so), approve and revoke grants; removing a secret revokes its grants;
 * the runtime redeems fill grants for an agent's fill on the document origin it read from
 * CDP, never one the model named, and checks and consumes capture grants around a capture's
 * write (`checkCapture`, `consumeCapture`; `capture_checks.ts`): each path accepts only its
 * own kind.
 *
 * Every operator change and every redemption or refusal is one audit row without values:
 * grant id, agent, session, origin (origin only) and the reason code, written after the change
 * is kept. Nothing is cached: every call reads the store, so a grant revoked by another process
 * (`omotai grant rm`) or runtime is refused at the next redemption.
 *
 * Redemption is atomic across every runtime of the tenant: one `change()` locks the grants it
 * judges, judges them, and consumes the passing ones with conditional writes that repeat the
 * checks. Of two runtimes redeeming one `once` grant, the second waits for the first, then
 * reads the grant used (`GRANT_USED`); a `session` grant binds to the first session that
 * redeems it the same way.
 *
 * One clock decides: the injected `now` (default `Date.now`; a redemption's `request.now`
 * wins), for every time written and every state judged. The vault is asked about secrets
 * outside a `change()`, never while it holds row locks (a vault on the same pool could
 * otherwise wait for a connection this one holds).
 *
 * @module
 */
import type {
  GrantChange,
  GrantListFilter,
  GrantPlan,
  GrantRecord,
  GrantStore,
} from "../store/mod.ts";
import { GrantError } from "./errors.ts";
import { type Grant, isCaptureGrant, newGrantId, parseGrantInput, withState } from "./grant.ts";
import {
  auditUnavailable,
  CAPTURE_CHECKED,
  captureRow,
  GRANT_CAPTURED,
  type GrantAuditEvent,
  operatorRow,
  SECRET_REMOVED,
} from "./grant_audit.ts";
import { type RedeemRequest, refusal } from "./redeem_checks.ts";
import { redemption } from "./redemption.ts";
import {
  type CaptureCheckRequest,
  type CaptureConsumeRequest,
  captureRefusal,
  type CaptureTarget,
  type CaptureVerdict,
  grantIdShaped,
  judgeCapture,
  judgeCaptureAll,
  occupiedTarget,
  targetsOf,
  validateCaptureRequest,
} from "./capture_checks.ts";

/**
 * Where grant rows go. A `GrantAuditSink` is one; an `append` that returns a promise is
 * awaited, so `{ append: (e) => pgAuditSink.appendSoon(e) }` makes every operation wait until
 * its row is committed (and fail as `AUDIT_UNAVAILABLE` when it is not).
 */
export interface AsyncGrantAuditSink {
  append(event: GrantAuditEvent): unknown;
}

/** The vault as grants see it: whether a secret id exists (no key, no value). */
export interface AsyncSecretIndex {
  has(secretId: string): boolean | Promise<boolean>;
}

/** What `Grants` is built with. */
export interface GrantsOptions {
  audit: AsyncGrantAuditSink;
  /**
   * Which secrets the vault holds (`Vault.has`); a grant's secret is looked up here, never in
   * the vault's table directly.
   */
  secrets: AsyncSecretIndex;
  /** The clock (tests); default `Date.now`. */
  now?: () => number;
}

/** Who made an operator change: the door (`cli`, `console`, `api`). */
export interface OperatorOptions {
  by?: string;
}

/** One tenant's grants, over `store`. */
export class Grants {
  readonly #store: GrantStore;
  readonly #audit: AsyncGrantAuditSink;
  readonly #secrets: AsyncSecretIndex;
  readonly #now: () => number;

  constructor(store: GrantStore, options: GrantsOptions) {
    this.#store = store;
    this.#audit = options.audit;
    this.#secrets = options.secrets;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Adds a grant from untrusted `input` (see `GrantInputSchema`). It starts `pending` unless
   * `approve` is set (an operator creating and approving in one step). A fill grant's secret
   * must be one the `secrets` port knows; a capture grant's must not be (its capture writes
   * it). Only the id is looked at, so no vault key is needed. Audited as `grant_add` (and
   * `grant_approve`). Rejects with `GRANT_INVALID`, `SECRET_NOT_FOUND`,
   * `CAPTURE_TARGET_OCCUPIED`, `GRANTS_UNAVAILABLE` or `AUDIT_UNAVAILABLE` (then the grant is
   * revoked, never left live without its rows).
   */
  async add(input: unknown, options: OperatorOptions & { approve?: boolean } = {}): Promise<Grant> {
    const now = this.#now();
    const g = parseGrantInput(input, now);
    const by = options.by ?? "operator";
    const at = iso(now);
    const id = newGrantId();
    const grant = await this.#guard(async () => {
      const held = await this.#secrets.has(g.secret_id);
      if (isCaptureGrant(g)) {
        // A capture writes into an empty secret: an occupied target could never be written
        // (and removing its value would revoke the grant with it).
        if (held) throw occupiedTarget(g.secret_id);
      } else if (!held) {
        throw new GrantError("SECRET_NOT_FOUND", `the vault holds no secret ${g.secret_id}`);
      }
      return withState(
        await this.#store.insert({
          id,
          ...g,
          created_at: at,
          created_by: by,
          approved_at: options.approve ? at : null,
          approved_by: options.approve ? by : null,
        }),
        now,
      );
    });
    try {
      await this.#audit.append(operatorRow("grant_add", grant, by, "event", "GRANT_ADDED"));
      if (options.approve) {
        await this.#audit.append(
          operatorRow("grant_approve", grant, by, "allow", "GRANT_APPROVED"),
        );
      }
    } catch (err) {
      // An unaudited grant must not exist: a half-written pair leaves it revoked, never live.
      await this.#revokeUnaudited(id, at, by);
      throw auditUnavailable(err, "the grant was not added");
    }
    return grant;
  }

  /**
   * Approves a pending grant. Audited as `grant_approve`. Rejects with `GRANT_NOT_FOUND`,
   * `GRANT_NOT_PENDING` (already approved), `GRANT_REVOKED`, `GRANT_EXPIRED`,
   * `GRANTS_UNAVAILABLE` or `AUDIT_UNAVAILABLE` (then the grant is revoked, never left live
   * without its row).
   */
  async approve(id: string, options: OperatorOptions = {}): Promise<Grant> {
    const now = this.#now();
    const by = options.by ?? "operator";
    const at = iso(now);
    const { written: [after] } = await this.#change(id, (before) => {
      const state = withState(before, now).state;
      if (state === "revoked") throw refusal("GRANT_REVOKED", id);
      if (state === "expired") throw refusal("GRANT_EXPIRED", id);
      if (state !== "pending") {
        throw new GrantError("GRANT_NOT_PENDING", `grant ${id} is not pending (${state})`);
      }
      return { writes: [{ kind: "approve", id, by, at }], result: undefined };
    });
    // Another process approved or revoked it between the read and the write.
    if (!after) {
      throw new GrantError("GRANT_NOT_PENDING", `grant ${id} changed while approving; list again`);
    }
    const grant = withState(after, now);
    try {
      await this.#audit.append(operatorRow("grant_approve", grant, by, "allow", "GRANT_APPROVED"));
    } catch (err) {
      await this.#revokeUnaudited(id, at, by);
      throw auditUnavailable(err, "the grant was revoked instead of approved");
    }
    return grant;
  }

  /**
   * Revokes a grant (pending or approved, expired or not): no redemption passes it again.
   * Audited as `grant_revoke`. Rejects with `GRANT_NOT_FOUND`, `GRANT_REVOKED` (already),
   * `GRANTS_UNAVAILABLE`, or `AUDIT_UNAVAILABLE` (the revocation stands all the same).
   */
  async revoke(id: string, options: OperatorOptions = {}): Promise<Grant> {
    const now = this.#now();
    const by = options.by ?? "operator";
    const reason = "GRANT_REVOKED";
    const { written: [after] } = await this.#change(id, (before) => {
      if (before.revoked_at !== null) throw refusal("GRANT_REVOKED", id);
      return { writes: [{ kind: "revoke", id, by, reason, at: iso(now) }], result: undefined };
    });
    if (!after) throw refusal("GRANT_REVOKED", id);
    const grant = withState(after, now);
    await this.#auditRevoked([grant], by, reason);
    return grant;
  }

  /**
   * Revokes every grant of `secretId` that is not revoked yet (its secret is being removed
   * from the vault); how many. Audited as one `grant_revoke` row each, reason
   * `SECRET_REMOVED`. Rejects with `GRANTS_UNAVAILABLE`, or `AUDIT_UNAVAILABLE` (the
   * revocations stand).
   */
  async revokeForSecret(secretId: string, options: OperatorOptions = {}): Promise<number> {
    const now = this.#now();
    const by = options.by ?? "operator";
    const records = await this.#guard(() =>
      this.#store.revokeForSecret(secretId, by, SECRET_REMOVED, iso(now))
    );
    if (records.length === 0) return 0;
    await this.#auditRevoked(records.map((r) => withState(r, now)), by, SECRET_REMOVED);
    return records.length;
  }

  /** Every grant (optionally of one secret or agent), newest first. */
  async list(filter: GrantListFilter = {}): Promise<Grant[]> {
    const now = this.#now();
    const records = await this.#guard(() => this.#store.list(filter));
    return records.map((r) => withState(r, now));
  }

  /** The grant `id`, or undefined. */
  async get(id: string): Promise<Grant | undefined> {
    const now = this.#now();
    if (!grantIdShaped(id)) return undefined;
    const record = await this.#guard(() => this.#store.get(id));
    return record ? withState(record, now) : undefined;
  }

  /**
   * Redeems grants for one fill (`redemption.ts` says how): all named pass, or none is
   * redeemed. Returns the redeemed grants (in the order named); rejects with the refusal.
   */
  redeem(request: RedeemRequest): Promise<Grant[]> {
    return redemption(request, {
      store: this.#store,
      secrets: this.#secrets,
      audit: this.#audit,
      now: request.now ?? this.#now(),
      guard: (fn) => this.#guard(fn),
      tryAudit: (event) => this.#tryAudit(event),
    });
  }

  /**
   * Checks a capture before anything is minted, writing no grant and no secret: every output's
   * grant must pass `judgeCapture()` (agent, approved, not revoked, not expired, not used, a
   * capture grant whose origins hold the exact `origin`, bound to `workflow` and to that output)
   * and its target secret id must be empty in the vault; no two outputs may share a target.
   * Returns where each output will be written (in the order given). Rejects with
   * `GRANT_INVALID` (a malformed request), the first failing output's refusal
   * (`GRANT_WRONG_WORKFLOW`, `GRANT_WRONG_OUTPUT`, `CAPTURE_TARGET_OCCUPIED`, …, the message
   * naming the output), or `AUDIT_UNAVAILABLE` (an allow row could not be kept: do not mint).
   * Audited as one `grant_capture_check` row per output: `allow` each when all pass, else
   * `deny` per refused output.
   */
  async checkCapture(
    request: CaptureCheckRequest,
    now: number = this.#now(),
  ): Promise<CaptureTarget[]> {
    const valid = validateCaptureRequest(request);
    const ids = [...new Set(valid.outputs.map((o) => o.grantId).filter(grantIdShaped))];
    const read = ids.length === 0 ? [] : await this.#guard(() => this.#store.find(ids));
    const grants = new Map(read.map((r) => [r.id, withState(r, now)]));
    // First pass: which targets to ask the vault about (those of otherwise passing grants).
    const ask = new Set<string>();
    judgeCaptureAll(valid, grants, (secretId) => {
      ask.add(secretId);
      return false;
    });
    const occupied = new Map<string, boolean>();
    await this.#guard(async () => {
      for (const id of ask) occupied.set(id, await this.#secrets.has(id));
    });
    const verdicts = judgeCaptureAll(valid, grants, (id) => occupied.get(id) ?? true);
    const row = (v: CaptureVerdict, decision: "allow" | "deny", reason: string) =>
      captureRow("grant_capture_check", valid, valid.sessionId, v.output, v.id, decision, reason);
    const refused = verdicts.filter((v) => v.refusal);
    if (refused.length > 0) {
      for (const v of refused) await this.#tryAudit(row(v, "deny", v.refusal!));
      throw captureRefusal(refused[0]);
    }
    try {
      for (const v of verdicts) await this.#audit.append(row(v, "allow", CAPTURE_CHECKED));
    } catch (err) {
      throw auditUnavailable(err, "the capture check is refused (nothing was written)");
    }
    return targetsOf(verdicts);
  }

  /**
   * Marks capture grant `grantId` used after its value was written into its secret: the checks
   * of `checkCapture()` run again (but the target, which now holds the value), then one
   * conditional write sets it used (once-mode semantics: a second consumption is `GRANT_USED`;
   * of two runtimes consuming one grant the second reads it used). Returns the used grant.
   * Rejects with the refusal (the value written stays; the grant is not consumed),
   * `GRANT_INVALID`, or `AUDIT_UNAVAILABLE` (the grant stays used: fail closed). Audited as
   * one `grant_capture` row: `allow` `GRANT_CAPTURED`, or `deny` with the code.
   */
  async consumeCapture(
    grantId: string,
    request: CaptureConsumeRequest,
    now: number = this.#now(),
  ): Promise<Grant> {
    const valid = validateCaptureRequest({
      ...request,
      outputs: [{ output: request?.output, grantId }],
    });
    const out = valid.outputs[0];
    const ids = grantIdShaped(out.grantId) ? [out.grantId] : [];
    const { result: verdict, written } = await this.#guard(() =>
      this.#store.change({ ids }, ([record]) => {
        const grant = record ? withState(record, now) : undefined;
        const verdict = judgeCapture(out, grant, valid, () => false, false);
        return {
          writes: verdict.refusal ? [] : [{ kind: "capture", id: out.grantId, at: iso(now) }],
          result: verdict,
        };
      })
    );
    const row = (decision: "allow" | "deny", reason: string) =>
      captureRow("grant_capture", valid, valid.sessionId, out.output, verdict.id, decision, reason);
    if (verdict.refusal) {
      await this.#tryAudit(row("deny", verdict.refusal));
      throw captureRefusal(verdict, "; the value written stays, the grant was not consumed");
    }
    if (!written[0]) {
      throw new GrantError("GRANTS_UNAVAILABLE", `grant ${out.grantId} changed while capturing`);
    }
    try {
      await this.#audit.append(row("allow", GRANT_CAPTURED));
    } catch (err) {
      throw auditUnavailable(err, "the capture grant stays used");
    }
    return withState(written[0], now);
  }

  /** A `change()` of grant `id` alone; `GRANT_NOT_FOUND` when there is none. */
  #change<T>(id: string, plan: (before: GrantRecord) => GrantPlan<T>): Promise<GrantChange<T>> {
    return this.#guard(() =>
      this.#store.change({ ids: grantIdShaped(id) ? [id] : [] }, ([before]) => {
        if (!before) throw refusal("GRANT_NOT_FOUND", grantIdShaped(id) ? id : undefined);
        return plan(before);
      })
    );
  }

  /** Writes the revocation rows; `AUDIT_UNAVAILABLE` when it cannot (the revocation stands). */
  async #auditRevoked(grants: readonly Grant[], by: string, reason: string): Promise<void> {
    try {
      for (const g of grants) {
        await this.#audit.append(operatorRow("grant_revoke", g, by, "event", reason));
      }
    } catch (err) {
      throw auditUnavailable(err, "the grant is revoked all the same");
    }
  }

  /** Revokes a grant whose audit row could not be written: it must not stay live without one. */
  async #revokeUnaudited(id: string, at: string, by: string): Promise<void> {
    await this.#guard(() =>
      this.#store.change({ ids: [id] }, () => ({
        writes: [{ kind: "revoke", id, by, reason: "AUDIT_UNAVAILABLE", at }],
        result: undefined,
      }))
    );
  }

  /** Runs `fn`; a database (or vault) failure becomes `GRANTS_UNAVAILABLE`. */
  async #guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof GrantError) throw err;
      throw new GrantError(
        "GRANTS_UNAVAILABLE",
        `the grants cannot be read or written: ${(err as Error)?.message}`,
        { cause: err },
      );
    }
  }

  /** A refusal's row: written if it can be; the refusal stands either way. */
  async #tryAudit(event: GrantAuditEvent): Promise<void> {
    try {
      await this.#audit.append(event);
    } catch {
      // Nothing was granted, so there is nothing to undo; the caller still gets the refusal.
    }
  }
}

/** `ms` as the ISO text every grant time is written as. */
function iso(ms: number): string {
  return new Date(ms).toISOString();
}
