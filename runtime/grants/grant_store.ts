/**
 * The grants table and the one place a grant is redeemed. Operators add (pending, or
 * approved at once when they say so), approve and revoke grants; removing a secret revokes
 * its grants; the runtime redeems fill grants for an agent's fill on the document origin it
 * read from CDP, never one the model named, and checks and consumes capture grants around a
 * capture's write (`checkCapture`, `consumeCapture`; `capture_checks.ts`): each path accepts
 * only its own kind.
 *
 * Every operator change and every redemption or refusal is one audit row without values:
 * grant id, agent, session, origin (origin only) and the reason code. The store keeps no cache:
 * every call reads the table, so a grant revoked by another process (`omotai grant rm`) is
 * refused at the next redemption.
 *
 * This file holds the SQL; the rows it audits are `grant_audit.ts`, the reading of a stored
 * row `grant_row.ts`, and the checks of a redemption `redeem_checks.ts`.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { normalizeOrigin } from "../net/origin.ts";
import { GrantError } from "./errors.ts";
import {
  type Grant,
  GRANT_ID_RE,
  isCaptureGrant,
  newGrantId,
  parseGrantInput,
  USE_KINDS,
  type UseKind,
} from "./grant.ts";
import {
  auditUnavailable,
  CAPTURE_CHECKED,
  captureRow,
  GRANT_CAPTURED,
  GRANT_REDEEMED,
  type GrantAuditEvent,
  type GrantAuditSink,
  operatorRow,
  SECRET_REMOVED,
} from "./grant_audit.ts";
import { type GrantRow, toGrant } from "./grant_row.ts";
import { closest, judgeGrant, type RedeemRequest, refusal, type Verdict } from "./redeem_checks.ts";
import {
  type CaptureCheckRequest,
  type CaptureConsumeRequest,
  captureRefusal,
  type CaptureTarget,
  type CaptureVerdict,
  judgeCapture,
  judgeCaptureAll,
  occupiedTarget,
  targetsOf,
  validateCaptureRequest,
} from "./capture_checks.ts";

/** What a `GrantStore` is built with. */
export interface GrantStoreOptions {
  audit: GrantAuditSink;
  /**
   * Which secrets the vault holds (`Vault.has`); a grant's secret is looked up here, never in
   * the vault's table directly.
   */
  secrets: SecretIndex;
  /** The clock (tests); default `Date.now`. */
  now?: () => number;
}

/** The vault as grants see it: whether a secret id exists (no key, no value). */
export interface SecretIndex {
  has(secretId: string): boolean;
}

/** Who made an operator change: the door (`cli`, `console`, `api`). */
export interface OperatorOptions {
  by?: string;
}

/** Reads and writes the `grants` table (migration 3 of `runtime/store/database.ts`). */
export class GrantStore {
  #db: DatabaseSync;
  #audit: GrantAuditSink;
  #now: () => number;
  #secrets: SecretIndex;

  constructor(db: DatabaseSync, options: GrantStoreOptions) {
    this.#db = db;
    this.#audit = options.audit;
    this.#now = options.now ?? Date.now;
    this.#secrets = options.secrets;
  }

  /**
   * Adds a grant from untrusted `input` (see `GrantInputSchema`). It starts `pending` unless
   * `approve` is set (an operator creating and approving in one step). A fill grant's secret
   * must be one the `secrets` port knows; a capture grant's must not be (its capture writes
   * it). Only the id is looked at, so no vault key is needed. Audited as `grant_add` (and
   * `grant_approve`). Throws `GRANT_INVALID`, `SECRET_NOT_FOUND`, `CAPTURE_TARGET_OCCUPIED`,
   * `GRANTS_UNAVAILABLE` or `AUDIT_UNAVAILABLE` (then the grant is not kept).
   */
  add(input: unknown, options: OperatorOptions & { approve?: boolean } = {}): Grant {
    const now = this.#now();
    const g = parseGrantInput(input, now);
    const by = options.by ?? "operator";
    const at = new Date(now).toISOString();
    const id = newGrantId();
    this.#guard(() => {
      const held = this.#secretExists(g.secret_id);
      if (isCaptureGrant(g)) {
        // A capture writes into an empty secret: an occupied target could never be written
        // (and removing its value would revoke the grant with it).
        if (held) throw occupiedTarget(g.secret_id);
      } else if (!held) {
        throw new GrantError("SECRET_NOT_FOUND", `the vault holds no secret ${g.secret_id}`);
      }
      this.#db.prepare(
        `INSERT INTO grants (id, secret_id, agent, purpose, mode, uses, expires_at, created_at,
          created_by, approved_at, approved_by) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
      ).run(
        id,
        g.secret_id,
        g.agent,
        g.purpose,
        g.mode,
        JSON.stringify(g.uses),
        g.expires_at,
        at,
        by,
        options.approve ? at : null,
        options.approve ? by : null,
      );
    });
    const grant = this.#mustGet(id, now);
    try {
      this.#audit.append(operatorRow("grant_add", grant, by, "event", "GRANT_ADDED"));
      if (options.approve) {
        this.#audit.append(operatorRow("grant_approve", grant, by, "allow", "GRANT_APPROVED"));
      }
    } catch (err) {
      // An unaudited grant must not exist: a half-written pair leaves it revoked, never live.
      this.#revokeUnaudited(id, at, by);
      throw auditUnavailable(err, "the grant was not added");
    }
    return grant;
  }

  /** Revokes a grant whose audit row could not be written: it must not stay live without one. */
  #revokeUnaudited(id: string, at: string, by: string): void {
    this.#guard(() =>
      this.#db.prepare(
        "UPDATE grants SET revoked_at = ?, revoked_by = ?, revoke_reason = ? WHERE id = ?",
      ).run(at, by, "AUDIT_UNAVAILABLE", id)
    );
  }

  /**
   * Approves a pending grant. Audited as `grant_approve`. Throws `GRANT_NOT_FOUND`,
   * `GRANT_NOT_PENDING` (already approved), `GRANT_REVOKED`, `GRANT_EXPIRED`,
   * `GRANTS_UNAVAILABLE` or `AUDIT_UNAVAILABLE` (then the grant is revoked, never left live
   * without its row).
   */
  approve(id: string, options: OperatorOptions = {}): Grant {
    const now = this.#now();
    const by = options.by ?? "operator";
    const at = new Date(now).toISOString();
    const before = this.#mustGet(id, now);
    if (before.state === "revoked") throw refusal("GRANT_REVOKED", id);
    if (before.state === "expired") throw refusal("GRANT_EXPIRED", id);
    if (before.state !== "pending") {
      throw new GrantError("GRANT_NOT_PENDING", `grant ${id} is not pending (${before.state})`);
    }
    const changed = this.#guard(() =>
      Number(
        this.#db.prepare(
          `UPDATE grants SET approved_at = ?, approved_by = ?
            WHERE id = ? AND approved_at IS NULL AND revoked_at IS NULL`,
        ).run(at, by, id).changes,
      )
    );
    // Another process approved or revoked it between the read and the write.
    if (changed !== 1) {
      throw new GrantError("GRANT_NOT_PENDING", `grant ${id} changed while approving; list again`);
    }
    const grant = this.#mustGet(id, now);
    try {
      this.#audit.append(operatorRow("grant_approve", grant, by, "allow", "GRANT_APPROVED"));
    } catch (err) {
      this.#revokeUnaudited(id, at, by);
      throw auditUnavailable(err, "the grant was revoked instead of approved");
    }
    return grant;
  }

  /**
   * Revokes a grant (pending or approved, expired or not): no redemption passes it again.
   * Audited as `grant_revoke`. Throws `GRANT_NOT_FOUND`, `GRANT_REVOKED` (already),
   * `GRANTS_UNAVAILABLE`, or `AUDIT_UNAVAILABLE` (the revocation stands all the same).
   */
  revoke(id: string, options: OperatorOptions = {}): Grant {
    const now = this.#now();
    const by = options.by ?? "operator";
    const before = this.#mustGet(id, now);
    if (before.revoked_at !== null) throw refusal("GRANT_REVOKED", id);
    return this.#revoke([id], by, "GRANT_REVOKED", now)[0];
  }

  /**
   * Revokes every grant of `secretId` that is not revoked yet (its secret is being removed
   * from the vault); returns how many. Audited as one `grant_revoke` row each, reason
   * `SECRET_REMOVED`. Throws `GRANTS_UNAVAILABLE`, or `AUDIT_UNAVAILABLE` (the revocations
   * stand).
   */
  revokeForSecret(secretId: string, options: OperatorOptions = {}): number {
    const now = this.#now();
    const ids = this.#guard(() =>
      this.#db.prepare("SELECT id FROM grants WHERE secret_id = ? AND revoked_at IS NULL")
        .all(secretId) as unknown as { id: string }[]
    ).map((r) => r.id);
    if (ids.length === 0) return 0;
    return this.#revoke(ids, options.by ?? "operator", SECRET_REMOVED, now).length;
  }

  /** Every grant (optionally of one secret or agent), newest first. */
  list(filter: { secretId?: string; agent?: string } = {}): Grant[] {
    const now = this.#now();
    const rows = this.#guard(() =>
      this.#db.prepare(
        `SELECT * FROM grants WHERE (?1 IS NULL OR secret_id = ?1) AND (?2 IS NULL OR agent = ?2)
          ORDER BY created_at DESC, rowid DESC`,
      ).all(filter.secretId ?? null, filter.agent ?? null) as unknown as GrantRow[]
    );
    return rows.map((r) => toGrant(r, now));
  }

  /** The grant `id`, or undefined. */
  get(id: string): Grant | undefined {
    return this.#get(id, this.#now());
  }

  /**
   * Redeems grants for one fill (`useKind` `fill`; a capture grant, or `capture`, is refused
   * `GRANT_WRONG_USE` without its secret being looked at): each must belong to `agent`, be approved, not
   * revoked, not expired, have a use of `useKind` whose origins include the normalized
   * `origin` exactly, not be a used `once` grant, and not be a `session` grant bound to
   * another session. All named grants pass or none is redeemed. On success a `once` grant is
   * used up and a `session` grant bound to `sessionId`, atomically (one write transaction, so
   * two racing redemptions of a `once` grant cannot both pass). A grant whose secret left the
   * vault is revoked here and refused.
   *
   * Returns the redeemed grants (in the order named). Throws `GrantError` with the refusal's
   * code (the first named grant's, or without ids the one that came closest to passing);
   * `AUDIT_UNAVAILABLE` when the allow rows cannot be written (the grants stay consumed:
   * fail closed). Each redeemed grant is one `allow` row; a refusal is one `deny` row per
   * refused named grant (without ids: the closest one, or one `GRANT_NOT_FOUND` row).
   */
  redeem(request: RedeemRequest): Grant[] {
    const now = request.now ?? this.#now();
    const origin = typeof request.origin === "string" ? normalizeOrigin(request.origin) : undefined;
    const useKind = (USE_KINDS as readonly string[]).includes(request.useKind)
      ? request.useKind
      : undefined;
    if (typeof request.sessionId !== "string" || request.sessionId === "") {
      throw new GrantError("GRANT_INVALID", "a redemption needs the session id");
    }
    const at = new Date(now).toISOString();
    const row = (
      v: Verdict,
      decision: "allow" | "deny",
      reason: string,
    ): GrantAuditEvent => ({
      session: request.sessionId,
      agent: request.agent,
      kind: "grant_redeem",
      source: "action",
      origin: origin ?? null,
      method: useKind ?? null,
      decision,
      reason,
      module: null,
      rule: v.id,
    });

    let verdicts: Verdict[] = [];
    let redeemed: Grant[] = [];
    this.#transaction(() => {
      verdicts = request.grantIds !== undefined
        ? [...new Set(request.grantIds)].map((id) => this.#judge(id, request, origin, useKind, now))
        : this.#candidates(request.agent, now).map((g) =>
          this.#judge(g.id, request, origin, useKind, now, g)
        );
      for (const v of verdicts) {
        if (v.secretGone) this.#markRevoked(v.id!, "vault", SECRET_REMOVED, at);
      }
      const failed = verdicts.some((v) => v.refusal);
      const passing = verdicts.filter((v) => !v.refusal);
      if (request.grantIds !== undefined ? failed || passing.length === 0 : passing.length === 0) {
        return;
      }
      for (const v of passing) this.#consume(v.grant!, request.sessionId, at);
      redeemed = passing.map((v) => this.#mustGet(v.id!, now));
    });

    const gone = verdicts.filter((v) => v.secretGone && v.grant);
    for (const v of gone) {
      this.#tryAudit(operatorRow("grant_revoke", v.grant!, "vault", "event", SECRET_REMOVED));
    }
    if (redeemed.length === 0) {
      const refused = verdicts.filter((v) => v.refusal);
      const shown = request.grantIds !== undefined ? refused : closest(refused);
      if (shown.length === 0) shown.push({ id: null, refusal: "GRANT_NOT_FOUND" });
      for (const v of shown) this.#tryAudit(row(v, "deny", v.refusal!));
      const first = shown[0];
      throw refusal(first.refusal!, first.id ?? undefined);
    }
    try {
      for (const g of redeemed) this.#audit.append(row({ id: g.id }, "allow", GRANT_REDEEMED));
    } catch (err) {
      throw auditUnavailable(err, "the redemption is refused (the grants stay consumed)");
    }
    return redeemed;
  }

  /**
   * Checks a capture before anything is minted, writing no grant and no secret: every output's
   * grant must pass `judgeCapture()` (agent, approved, not revoked, not expired, not used, a
   * capture grant whose origins hold the exact `origin`, bound to `workflow` and to that output)
   * and its target secret id must be empty in the vault; no two outputs may share a target.
   * Returns where each output will be written (in the order given). Throws `GRANT_INVALID`
   * (a malformed request), the first failing output's refusal (`GRANT_WRONG_WORKFLOW`,
   * `GRANT_WRONG_OUTPUT`, `CAPTURE_TARGET_OCCUPIED`, …, the message naming the output), or
   * `AUDIT_UNAVAILABLE` (an allow row could not be kept: do not mint). Audited as one
   * `grant_capture_check` row per output: `allow` each when all pass, else `deny` per refused
   * output.
   */
  checkCapture(request: CaptureCheckRequest, now: number = this.#now()): CaptureTarget[] {
    const valid = validateCaptureRequest(request);
    const grants = new Map<string, Grant>();
    this.#guard(() => {
      for (const o of valid.outputs) {
        const g = this.#get(o.grantId, now);
        if (g) grants.set(o.grantId, g);
      }
    });
    const verdicts = this.#guard(() =>
      judgeCaptureAll(valid, grants, (id) => this.#secretExists(id))
    );
    const row = (v: CaptureVerdict, decision: "allow" | "deny", reason: string) =>
      captureRow("grant_capture_check", valid, valid.sessionId, v.output, v.id, decision, reason);
    const refused = verdicts.filter((v) => v.refusal);
    if (refused.length > 0) {
      for (const v of refused) this.#tryAudit(row(v, "deny", v.refusal!));
      throw captureRefusal(refused[0]);
    }
    try {
      for (const v of verdicts) this.#audit.append(row(v, "allow", CAPTURE_CHECKED));
    } catch (err) {
      throw auditUnavailable(err, "the capture check is refused (nothing was written)");
    }
    return targetsOf(verdicts);
  }

  /**
   * Marks capture grant `grantId` used after its value was written into its secret: the checks
   * of `checkCapture()` run again (but the target, which now holds the value), then one
   * conditional write sets it used (once-mode semantics: a second consumption is `GRANT_USED`).
   * Returns the used grant. Throws the refusal (the value written stays; the grant is not
   * consumed), `GRANT_INVALID`, or `AUDIT_UNAVAILABLE` (the grant stays used: fail closed).
   * Audited as one `grant_capture` row: `allow` `GRANT_CAPTURED`, or `deny` with the code.
   */
  consumeCapture(
    grantId: string,
    request: CaptureConsumeRequest,
    now: number = this.#now(),
  ): Grant {
    const valid = validateCaptureRequest({
      ...request,
      outputs: [{ output: request?.output, grantId }],
    });
    const out = valid.outputs[0];
    const at = new Date(now).toISOString();
    let verdict: CaptureVerdict | undefined;
    let used: Grant | undefined;
    this.#transaction(() => {
      const grant = this.#get(out.grantId, now);
      verdict = judgeCapture(out, grant, valid, () => false, false);
      if (verdict.refusal) return;
      const changes = Number(
        this.#db.prepare(
          `UPDATE grants SET used_at = ?1, last_redeemed_at = ?1, redemptions = redemptions + 1
            WHERE id = ?2 AND used_at IS NULL AND revoked_at IS NULL
              AND approved_at IS NOT NULL AND expires_at > ?1`,
        ).run(at, out.grantId).changes,
      );
      if (changes !== 1) {
        throw new GrantError("GRANTS_UNAVAILABLE", `grant ${out.grantId} changed while capturing`);
      }
      used = this.#mustGet(out.grantId, now);
    });
    const v = verdict!;
    const row = (decision: "allow" | "deny", reason: string) =>
      captureRow("grant_capture", valid, valid.sessionId, out.output, v.id, decision, reason);
    if (!used) {
      this.#tryAudit(row("deny", v.refusal!));
      throw captureRefusal(v, "; the value written stays, the grant was not consumed");
    }
    try {
      this.#audit.append(row("allow", GRANT_CAPTURED));
    } catch (err) {
      throw auditUnavailable(err, "the capture grant stays used");
    }
    return used;
  }

  /** The agent's grants, oldest first (the order a search reports them in). */
  #candidates(agent: string | null, now: number): Grant[] {
    if (agent === null) return [];
    const rows = this.#db.prepare(
      "SELECT * FROM grants WHERE agent = ? ORDER BY created_at, rowid",
    ).all(agent) as unknown as GrantRow[];
    return rows.map((r) => toGrant(r, now));
  }

  /** Reads grant `id` (unless `known`) and runs its checks (`judgeGrant`). */
  #judge(
    id: string,
    request: RedeemRequest,
    origin: string | undefined,
    useKind: UseKind | undefined,
    now: number,
    known?: Grant,
  ): Verdict {
    // A model-supplied id that is not id-shaped is not written to the audit.
    const shownId = typeof id === "string" && GRANT_ID_RE.test(id) ? id : null;
    const grant = known ?? (shownId ? this.#get(shownId, now) : undefined);
    return judgeGrant(shownId, grant, request, origin, useKind, (id) => this.#secretExists(id));
  }

  /** Marks one passing grant redeemed; the conditions repeat the checks inside the write. */
  #consume(grant: Grant, sessionId: string, at: string): void {
    const sql = grant.mode === "once"
      ? `UPDATE grants SET used_at = ?1, last_redeemed_at = ?1, redemptions = redemptions + 1
          WHERE id = ?2 AND used_at IS NULL AND revoked_at IS NULL`
      : grant.mode === "session"
      ? `UPDATE grants SET session_id = COALESCE(session_id, ?3), used_at = COALESCE(used_at, ?1),
          last_redeemed_at = ?1, redemptions = redemptions + 1
          WHERE id = ?2 AND revoked_at IS NULL AND (session_id IS NULL OR session_id = ?3)`
      : `UPDATE grants SET used_at = COALESCE(used_at, ?1), last_redeemed_at = ?1,
          redemptions = redemptions + 1 WHERE id = ?2 AND revoked_at IS NULL`;
    // SQLite refuses a parameter the statement does not name.
    const args = grant.mode === "session" ? [at, grant.id, sessionId] : [at, grant.id];
    const changes = Number(this.#db.prepare(sql).run(...args).changes);
    if (changes !== 1) {
      throw new GrantError("GRANTS_UNAVAILABLE", `grant ${grant.id} changed while redeeming`);
    }
  }

  /** Revokes `ids`, then writes their rows. */
  #revoke(ids: readonly string[], by: string, reason: string, now: number): Grant[] {
    const at = new Date(now).toISOString();
    this.#guard(() => {
      for (const id of ids) this.#markRevoked(id, by, reason, at);
    });
    const grants = ids.map((id) => this.#mustGet(id, now));
    try {
      for (const g of grants) {
        this.#audit.append(operatorRow("grant_revoke", g, by, "event", reason));
      }
    } catch (err) {
      throw auditUnavailable(err, "the grant is revoked all the same");
    }
    return grants;
  }

  #markRevoked(id: string, by: string, reason: string, at: string): void {
    this.#db.prepare(
      `UPDATE grants SET revoked_at = ?, revoked_by = ?, revoke_reason = ?
        WHERE id = ? AND revoked_at IS NULL`,
    ).run(at, by, reason, id);
  }

  /** Whether the vault holds `secretId`. */
  #secretExists(secretId: string): boolean {
    return this.#secrets.has(secretId);
  }

  #get(id: string, now: number): Grant | undefined {
    if (typeof id !== "string" || !GRANT_ID_RE.test(id)) return undefined;
    const row = this.#guard(() =>
      this.#db.prepare("SELECT * FROM grants WHERE id = ?").get(id) as GrantRow | undefined
    );
    return row ? toGrant(row, now) : undefined;
  }

  #mustGet(id: string, now: number): Grant {
    const grant = this.#get(id, now);
    if (!grant) throw refusal("GRANT_NOT_FOUND", GRANT_ID_RE.test(id) ? id : undefined);
    return grant;
  }

  /** A write transaction (IMMEDIATE: the check and the write see the same table). */
  #transaction(fn: () => void): void {
    this.#guard(() => {
      this.#db.exec("BEGIN IMMEDIATE");
      try {
        fn();
        this.#db.exec("COMMIT");
      } catch (err) {
        this.#db.exec("ROLLBACK");
        throw err;
      }
    });
  }

  /** Runs `fn`; a database failure becomes `GRANTS_UNAVAILABLE`. */
  #guard<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof GrantError) throw err;
      throw new GrantError(
        "GRANTS_UNAVAILABLE",
        `the grants cannot be read or written: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  /** A refusal's row: written if it can be; the refusal stands either way. */
  #tryAudit(event: GrantAuditEvent): void {
    try {
      this.#audit.append(event);
    } catch {
      // Nothing was granted, so there is nothing to undo; the caller still gets the refusal.
    }
  }
}
