/**
 * One tenant's grants in PostgreSQL (`grants`, under row-level security), behaving as the
 * embedded `GrantStore` does: the same input parsing (`grant.ts`), the same reading of a row
 * (`grant_row.ts`), the same checks in the same order (`redeem_checks.ts`), the same errors
 * and the same audit rows, written after the change commits.
 *
 * Redemption is atomic across every runtime of the tenant: one transaction locks the grants it
 * judges (`SELECT … FOR UPDATE`, in id order so two redemptions never wait on each other in a
 * circle), judges them, and consumes the passing ones with conditional `UPDATE … RETURNING`s
 * that repeat the checks. Of two runtimes redeeming one `once` grant, the second waits for the
 * first's commit, then reads the grant used (`GRANT_USED`); a `session` grant binds to the
 * first session that redeems it the same way. A trigger (`pg_migration_grants.ts`) refuses
 * what no runtime may write: a revoked grant revived, origins widened, a binding moved.
 *
 * One clock decides, as in `GrantStore`: the injected `now` (default `Date.now`; a
 * redemption's `request.now` wins), for every time written and every state judged, the
 * conditional updates' `expires_at > now` included. The database's clock only orders grants
 * added in the same millisecond. So both adapters agree under one clock, and a runtime's
 * skew moves an expiry by that skew on that runtime only (keep the runtimes on NTP).
 *
 * The vault is asked about secrets before the transaction, never while it holds row locks
 * (a vault on the same pool could otherwise wait for a connection this one holds).
 *
 * @module
 */
import { normalizeOrigin } from "../net/origin.ts";
import type { PgDatabase, PgTx } from "../store/pg_database.ts";
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
  operatorRow,
  SECRET_REMOVED,
} from "./grant_audit.ts";
import type { GrantListFilter, GrantPort } from "./grant_port.ts";
import { type GrantRow, toGrant } from "./grant_row.ts";
import type { OperatorOptions } from "./grant_store.ts";
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

/**
 * Where grant rows go. A `GrantAuditSink` is one; an `append` that returns a promise is
 * awaited, so `{ append: (e) => pgAuditSink.appendSoon(e) }` makes every operation wait until
 * its row is committed (and fail as `AUDIT_UNAVAILABLE` when it is not).
 */
export interface AsyncGrantAuditSink {
  append(event: GrantAuditEvent): void | Promise<unknown>;
}

/** The vault as grants see it: whether a secret id exists (no key, no value). */
export interface AsyncSecretIndex {
  has(secretId: string): boolean | Promise<boolean>;
}

/** What a `PgGrantStore` is built with. */
export interface PgGrantStoreOptions {
  audit: AsyncGrantAuditSink;
  /** Which secrets the tenant's vault holds. */
  secrets: AsyncSecretIndex;
  /** The clock (tests); default `Date.now`. */
  now?: () => number;
}

/** A `grants` row as the client returns it. */
interface PgGrantRow {
  id: string;
  secret_id: string;
  agent: string;
  purpose: string;
  mode: string;
  uses: unknown;
  expires_at: Date;
  created_at: Date;
  created_by: string;
  approved_at: Date | null;
  approved_by: string | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  revoke_reason: string | null;
  session_id: string | null;
  used_at: Date | null;
  last_redeemed_at: Date | null;
  redemptions: number;
}

/** What one redemption transaction decided, or the secrets it must learn first. */
type Judged =
  | { missing: Set<string> }
  | { verdicts: Verdict[]; redeemed: Grant[] };

/** The most transactions one redemption takes to learn the secrets of grants added meanwhile. */
const REDEEM_ATTEMPTS = 4;

/** Tenant `tenant`'s grants in `db`. */
export class PgGrantStore implements GrantPort {
  readonly tenant: string;
  readonly #db: PgDatabase;
  readonly #audit: AsyncGrantAuditSink;
  readonly #secrets: AsyncSecretIndex;
  readonly #now: () => number;

  constructor(db: PgDatabase, tenant: string, options: PgGrantStoreOptions) {
    this.#db = db;
    this.tenant = tenant;
    this.#audit = options.audit;
    this.#secrets = options.secrets;
    this.#now = options.now ?? Date.now;
  }

  /** As `GrantStore.add()`. */
  async add(input: unknown, options: OperatorOptions & { approve?: boolean } = {}): Promise<Grant> {
    const now = this.#now();
    const g = parseGrantInput(input, now);
    const by = options.by ?? "operator";
    const at = iso(now);
    const id = newGrantId();
    const approvedAt = options.approve ? at : null;
    const approvedBy = options.approve ? by : null;
    // A JSON value (the client serializes it for the jsonb column).
    const uses = JSON.parse(JSON.stringify(g.uses));
    const grant = await this.#guard(async () => {
      const held = await this.#secrets.has(g.secret_id);
      if (isCaptureGrant(g)) {
        // A capture writes into an empty secret (see `GrantStore.add()`).
        if (held) throw occupiedTarget(g.secret_id);
      } else if (!held) {
        throw new GrantError("SECRET_NOT_FOUND", `the vault holds no secret ${g.secret_id}`);
      }
      const [row] = await this.#db.tenant(
        this.tenant,
        (tx) =>
          tx<PgGrantRow[]>`INSERT INTO grants (tenant_id, id, secret_id, agent, purpose, mode,
            uses, expires_at, created_at, created_by, approved_at, approved_by)
          VALUES (${this.tenant}, ${id}, ${g.secret_id}, ${g.agent}, ${g.purpose}, ${g.mode},
            ${tx.json(uses)}, ${g.expires_at}, ${at}, ${by}, ${approvedAt}, ${approvedBy})
          RETURNING *`,
      );
      return toGrant(grantRow(row), now);
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

  /** As `GrantStore.approve()`. */
  async approve(id: string, options: OperatorOptions = {}): Promise<Grant> {
    const now = this.#now();
    const by = options.by ?? "operator";
    const at = iso(now);
    const grant = await this.#inTenant(async (tx) => {
      const before = await this.#mustLock(tx, id, now);
      if (before.state === "revoked") throw refusal("GRANT_REVOKED", id);
      if (before.state === "expired") throw refusal("GRANT_EXPIRED", id);
      if (before.state !== "pending") {
        throw new GrantError("GRANT_NOT_PENDING", `grant ${id} is not pending (${before.state})`);
      }
      const [row] = await tx<PgGrantRow[]>`UPDATE grants
        SET approved_at = ${at}, approved_by = ${by}
        WHERE tenant_id = ${this.tenant} AND id = ${id}
          AND approved_at IS NULL AND revoked_at IS NULL
        RETURNING *`;
      if (!row) {
        throw new GrantError(
          "GRANT_NOT_PENDING",
          `grant ${id} changed while approving; list again`,
        );
      }
      return toGrant(grantRow(row), now);
    });
    try {
      await this.#audit.append(operatorRow("grant_approve", grant, by, "allow", "GRANT_APPROVED"));
    } catch (err) {
      await this.#revokeUnaudited(id, at, by);
      throw auditUnavailable(err, "the grant was revoked instead of approved");
    }
    return grant;
  }

  /** As `GrantStore.revoke()`. */
  async revoke(id: string, options: OperatorOptions = {}): Promise<Grant> {
    const now = this.#now();
    const by = options.by ?? "operator";
    const grant = await this.#inTenant(async (tx) => {
      const before = await this.#mustLock(tx, id, now);
      if (before.revoked_at !== null) throw refusal("GRANT_REVOKED", id);
      const [row] = await this.#markRevoked(tx, [id], by, "GRANT_REVOKED", iso(now));
      if (!row) throw refusal("GRANT_REVOKED", id);
      return toGrant(grantRow(row), now);
    });
    await this.#auditRevoked([grant], by, "GRANT_REVOKED");
    return grant;
  }

  /** As `GrantStore.revokeForSecret()`. */
  async revokeForSecret(secretId: string, options: OperatorOptions = {}): Promise<number> {
    const now = this.#now();
    const by = options.by ?? "operator";
    const rows = await this.#inTenant((tx) =>
      tx<(PgGrantRow & { inserted_at: Date })[]>`UPDATE grants
        SET revoked_at = ${iso(now)}, revoked_by = ${by}, revoke_reason = ${SECRET_REMOVED}
        WHERE tenant_id = ${this.tenant} AND secret_id = ${secretId} AND revoked_at IS NULL
        RETURNING *`
    );
    if (rows.length === 0) return 0;
    const grants = [...rows]
      .sort((a, b) =>
        a.created_at.getTime() - b.created_at.getTime() ||
        a.inserted_at.getTime() - b.inserted_at.getTime()
      )
      .map((r) => toGrant(grantRow(r), now));
    await this.#auditRevoked(grants, by, SECRET_REMOVED);
    return grants.length;
  }

  /** As `GrantStore.list()`: newest first. */
  async list(filter: GrantListFilter = {}): Promise<Grant[]> {
    const now = this.#now();
    const secretId = filter.secretId ?? null;
    const agent = filter.agent ?? null;
    const rows = await this.#inTenant((tx) =>
      tx<PgGrantRow[]>`SELECT * FROM grants WHERE tenant_id = ${this.tenant}
        AND (${secretId}::text IS NULL OR secret_id = ${secretId})
        AND (${agent}::text IS NULL OR agent = ${agent})
        ORDER BY created_at DESC, inserted_at DESC, id DESC`
    );
    return rows.map((r) => toGrant(grantRow(r), now));
  }

  /** As `GrantStore.get()`. */
  async get(id: string): Promise<Grant | undefined> {
    const now = this.#now();
    if (!idShaped(id)) return undefined;
    const [row] = await this.#inTenant((tx) =>
      tx<PgGrantRow[]>`SELECT * FROM grants WHERE tenant_id = ${this.tenant} AND id = ${id}`
    );
    return row ? toGrant(grantRow(row), now) : undefined;
  }

  /**
   * As `GrantStore.redeem()`, atomic across runtimes: the grants judged are locked until the
   * transaction that consumes them commits.
   */
  async redeem(request: RedeemRequest): Promise<Grant[]> {
    const now = request.now ?? this.#now();
    const origin = typeof request.origin === "string" ? normalizeOrigin(request.origin) : undefined;
    const useKind = (USE_KINDS as readonly string[]).includes(request.useKind)
      ? request.useKind
      : undefined;
    if (typeof request.sessionId !== "string" || request.sessionId === "") {
      throw new GrantError("GRANT_INVALID", "a redemption needs the session id");
    }
    const at = iso(now);
    const row = (v: Verdict, decision: "allow" | "deny", reason: string): GrantAuditEvent => ({
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

    // The vault's answers, learned outside the transaction (see the module's header).
    const secrets = new Map<string, boolean>();
    let judged: Judged | undefined;
    for (let attempt = 0; attempt < REDEEM_ATTEMPTS; attempt++) {
      judged = await this.#inTenant((tx) =>
        this.#judgeAndConsume(tx, request, origin, useKind, now, at, secrets)
      );
      if (!("missing" in judged)) break;
      const missing = judged.missing;
      await this.#guard(async () => {
        for (const id of missing) secrets.set(id, await this.#secrets.has(id));
      });
    }
    if (!judged || "missing" in judged) {
      throw new GrantError("GRANTS_UNAVAILABLE", "the grants kept changing while redeeming");
    }
    const { verdicts, redeemed } = judged;

    const gone = verdicts.filter((v) => v.secretGone && v.grant);
    for (const v of gone) {
      await this.#tryAudit(operatorRow("grant_revoke", v.grant!, "vault", "event", SECRET_REMOVED));
    }
    if (redeemed.length === 0) {
      const refused = verdicts.filter((v) => v.refusal);
      const shown = request.grantIds !== undefined ? refused : closest(refused);
      if (shown.length === 0) shown.push({ id: null, refusal: "GRANT_NOT_FOUND" });
      for (const v of shown) await this.#tryAudit(row(v, "deny", v.refusal!));
      const first = shown[0];
      throw refusal(first.refusal!, first.id ?? undefined);
    }
    try {
      for (const g of redeemed) {
        await this.#audit.append(row({ id: g.id }, "allow", GRANT_REDEEMED));
      }
    } catch (err) {
      throw auditUnavailable(err, "the redemption is refused (the grants stay consumed)");
    }
    return redeemed;
  }

  /**
   * As `GrantStore.checkCapture()`: reads the grants (no lock: nothing is written), asks the
   * vault about the targets of the grants that pass every other check, judges, audits.
   */
  async checkCapture(request: CaptureCheckRequest, now: number = this.#now()): Promise<
    CaptureTarget[]
  > {
    const valid = validateCaptureRequest(request);
    const ids = [...new Set(valid.outputs.map((o) => o.grantId).filter(idShaped))];
    const read = ids.length === 0
      ? []
      : await this.#inTenant((tx) =>
        tx<PgGrantRow[]>`SELECT * FROM grants WHERE tenant_id = ${this.tenant} AND id IN ${tx(ids)}`
      );
    const grants = new Map(read.map((r) => [r.id, toGrant(grantRow(r), now)]));
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
   * As `GrantStore.consumeCapture()`, atomic across runtimes: the grant is locked, judged and
   * marked used by one conditional `UPDATE … RETURNING` (`used_at IS NULL`, live, approved,
   * not expired); of two runtimes consuming one grant the second reads it used.
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
    const at = iso(now);
    const { verdict, used } = await this.#inTenant(async (tx) => {
      const [grant] = idShaped(out.grantId) ? await this.#lockIds(tx, [out.grantId], now) : [];
      const verdict = judgeCapture(out, grant, valid, () => false, false);
      if (verdict.refusal) return { verdict, used: undefined };
      const rows = await tx<PgGrantRow[]>`UPDATE grants
        SET used_at = ${at}, last_redeemed_at = ${at}, redemptions = redemptions + 1
        WHERE tenant_id = ${this.tenant} AND id = ${out.grantId} AND used_at IS NULL
          AND revoked_at IS NULL AND approved_at IS NOT NULL AND expires_at > ${at}
        RETURNING *`;
      if (rows.length !== 1) {
        throw new GrantError("GRANTS_UNAVAILABLE", `grant ${out.grantId} changed while capturing`);
      }
      return { verdict, used: toGrant(grantRow(rows[0]), now) };
    });
    const row = (decision: "allow" | "deny", reason: string) =>
      captureRow("grant_capture", valid, valid.sessionId, out.output, verdict.id, decision, reason);
    if (!used) {
      await this.#tryAudit(row("deny", verdict.refusal!));
      throw captureRefusal(verdict, "; the value written stays, the grant was not consumed");
    }
    try {
      await this.#audit.append(row("allow", GRANT_CAPTURED));
    } catch (err) {
      throw auditUnavailable(err, "the capture grant stays used");
    }
    return used;
  }

  /**
   * One redemption's transaction: locks and judges the grants; when every secret asked about
   * is in `secrets`, revokes those whose secret is gone and consumes the passing ones (all
   * named pass, or none); otherwise writes nothing and names the secrets to learn.
   */
  async #judgeAndConsume(
    tx: PgTx,
    request: RedeemRequest,
    origin: string | undefined,
    useKind: UseKind | undefined,
    now: number,
    at: string,
    secrets: ReadonlyMap<string, boolean>,
  ): Promise<Judged> {
    const named = request.grantIds !== undefined ? [...new Set(request.grantIds)] : undefined;
    let targets: { shownId: string | null; grant: Grant | undefined }[];
    if (named) {
      const byId = new Map((await this.#lockIds(tx, named.filter(idShaped), now)).map((g) => [
        g.id,
        g,
      ]));
      targets = named.map((id) => {
        // A model-supplied id that is not id-shaped is not written to the audit.
        const shownId = idShaped(id) ? id : null;
        return { shownId, grant: shownId ? byId.get(shownId) : undefined };
      });
    } else {
      targets = (await this.#lockCandidates(tx, request.agent, now)).map((g) => ({
        shownId: idShaped(g.id) ? g.id : null,
        grant: g,
      }));
    }
    const missing = new Set<string>();
    const verdicts = targets.map((t) =>
      judgeGrant(t.shownId, t.grant, request, origin, useKind, (secretId) => {
        const known = secrets.get(secretId);
        if (known !== undefined) return known;
        // Not asked yet: this pass only collects what to ask; it decides nothing.
        missing.add(secretId);
        return true;
      })
    );
    if (missing.size > 0) return { missing };

    for (const v of verdicts) {
      if (v.secretGone) await this.#markRevoked(tx, [v.id!], "vault", SECRET_REMOVED, at);
    }
    const failed = verdicts.some((v) => v.refusal);
    const passing = verdicts.filter((v) => !v.refusal);
    if (named ? failed || passing.length === 0 : passing.length === 0) {
      return { verdicts, redeemed: [] };
    }
    const redeemed: Grant[] = [];
    for (const v of passing) redeemed.push(await this.#consume(tx, v.grant!, request, at, now));
    return { verdicts, redeemed };
  }

  /** The named grants of this tenant, locked in id order. */
  async #lockIds(tx: PgTx, ids: readonly string[], now: number): Promise<Grant[]> {
    if (ids.length === 0) return [];
    const rows = await tx<PgGrantRow[]>`SELECT * FROM grants
      WHERE tenant_id = ${this.tenant} AND id IN ${tx(ids)}
      ORDER BY id FOR UPDATE`;
    return rows.map((r) => toGrant(grantRow(r), now));
  }

  /** The agent's grants, locked in id order, returned oldest first (as a search reports them). */
  async #lockCandidates(tx: PgTx, agent: string | null, now: number): Promise<Grant[]> {
    if (agent === null) return [];
    const rows = await tx<PgGrantRow[]>`WITH locked AS MATERIALIZED (
        SELECT * FROM grants WHERE tenant_id = ${this.tenant} AND agent = ${agent}
        ORDER BY id FOR UPDATE)
      SELECT * FROM locked ORDER BY created_at, inserted_at, id`;
    return rows.map((r) => toGrant(grantRow(r), now));
  }

  /** Marks one passing grant redeemed; the conditions repeat the checks inside the write. */
  async #consume(
    tx: PgTx,
    grant: Grant,
    request: RedeemRequest,
    at: string,
    now: number,
  ): Promise<Grant> {
    const live = tx`tenant_id = ${this.tenant} AND id = ${grant.id} AND revoked_at IS NULL
      AND approved_at IS NOT NULL AND expires_at > ${at}`;
    const rows = grant.mode === "once"
      ? await tx<PgGrantRow[]>`UPDATE grants
          SET used_at = ${at}, last_redeemed_at = ${at}, redemptions = redemptions + 1
          WHERE ${live} AND used_at IS NULL RETURNING *`
      : grant.mode === "session"
      ? await tx<PgGrantRow[]>`UPDATE grants
          SET session_id = coalesce(session_id, ${request.sessionId}),
            used_at = coalesce(used_at, ${at}), last_redeemed_at = ${at},
            redemptions = redemptions + 1
          WHERE ${live} AND (session_id IS NULL OR session_id = ${request.sessionId})
          RETURNING *`
      : await tx<PgGrantRow[]>`UPDATE grants
          SET used_at = coalesce(used_at, ${at}), last_redeemed_at = ${at},
            redemptions = redemptions + 1
          WHERE ${live} RETURNING *`;
    if (rows.length !== 1) {
      throw new GrantError("GRANTS_UNAVAILABLE", `grant ${grant.id} changed while redeeming`);
    }
    return toGrant(grantRow(rows[0]), now);
  }

  /** Revokes `ids` that are not revoked yet; their rows after. */
  #markRevoked(
    tx: PgTx,
    ids: readonly string[],
    by: string,
    reason: string,
    at: string,
  ): Promise<PgGrantRow[]> {
    return tx<PgGrantRow[]>`UPDATE grants
      SET revoked_at = ${at}, revoked_by = ${by}, revoke_reason = ${reason}
      WHERE tenant_id = ${this.tenant} AND id IN ${tx(ids)} AND revoked_at IS NULL
      RETURNING *`;
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
    await this.#inTenant((tx) => this.#markRevoked(tx, [id], by, "AUDIT_UNAVAILABLE", at));
  }

  /** Grant `id` locked for this transaction, or `GRANT_NOT_FOUND`. */
  async #mustLock(tx: PgTx, id: string, now: number): Promise<Grant> {
    const [grant] = idShaped(id) ? await this.#lockIds(tx, [id], now) : [];
    if (!grant) throw refusal("GRANT_NOT_FOUND", idShaped(id) ? id : undefined);
    return grant;
  }

  /** `fn` in one transaction as this store's tenant; a failure is `GRANTS_UNAVAILABLE`. */
  #inTenant<T>(fn: (tx: PgTx) => Promise<T>): Promise<T> {
    return this.#guard(() => this.#db.tenant(this.tenant, fn));
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

/** Whether `id` looks like a grant id (anything else is never looked up or audited). */
function idShaped(id: unknown): id is string {
  return typeof id === "string" && GRANT_ID_RE.test(id);
}

/** `ms` as the ISO text every grant time is written as. */
function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** A client row as the `GrantRow` `toGrant()` reads (a damaged time reads as invalid). */
function grantRow(r: PgGrantRow): GrantRow {
  const time = (d: Date | null): string | null =>
    d === null ? null : Number.isNaN(d.getTime()) ? "invalid" : d.toISOString();
  return {
    id: r.id,
    secret_id: r.secret_id,
    agent: r.agent,
    purpose: r.purpose,
    mode: r.mode,
    uses: typeof r.uses === "string" ? r.uses : JSON.stringify(r.uses),
    expires_at: time(r.expires_at)!,
    created_at: time(r.created_at)!,
    created_by: r.created_by,
    approved_at: time(r.approved_at),
    approved_by: r.approved_by,
    revoked_at: time(r.revoked_at),
    revoked_by: r.revoked_by,
    revoke_reason: r.revoke_reason,
    session_id: r.session_id,
    used_at: time(r.used_at),
    last_redeemed_at: time(r.last_redeemed_at),
    redemptions: Number(r.redemptions),
  };
}
