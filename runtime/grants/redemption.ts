/**
 * One redemption of fill grants (`Grants.redeem()`), whichever store holds them: read and lock
 * the grants, judge them (`redeem_checks.ts`), revoke those whose secret left the vault,
 * consume the passing ones, audit. Split from `grants.ts` so the operator's changes and the
 * runtime's redemption each stay one readable file.
 *
 * A capture grant (or `useKind` `capture`) is refused `GRANT_WRONG_USE` without its secret
 * being looked at. Each grant must belong to `agent`, be approved, not revoked, not expired,
 * have a use of `useKind` whose origins include the normalized `origin` exactly, not be a used
 * `once` grant, and not be a `session` grant bound to another session. All named grants pass
 * or none is redeemed. On success a `once` grant is used up and a `session` grant bound to
 * `sessionId`, in one `change()` of the store (two racing redemptions of a `once` grant
 * cannot both pass).
 *
 * Rejects with the refusal's code (the first named grant's, or without ids the one that came
 * closest to passing); `AUDIT_UNAVAILABLE` when the allow rows cannot be written (the grants
 * stay consumed: fail closed). Each redeemed grant is one `allow` row; a refusal is one `deny`
 * row per refused named grant (without ids: the closest one, or one `GRANT_NOT_FOUND` row).
 *
 * @module
 */
import { normalizeOrigin } from "../net/mod.ts";
import type { GrantRecord, GrantStore, GrantWrite } from "../store/mod.ts";
import { GrantError } from "./errors.ts";
import { type Grant, USE_KINDS, withState } from "./grant.ts";
import {
  auditUnavailable,
  GRANT_REDEEMED,
  type GrantAuditEvent,
  operatorRow,
  SECRET_REMOVED,
} from "./grant_audit.ts";
import { grantIdShaped } from "./capture_checks.ts";
import { closest, judgeGrant, type RedeemRequest, refusal, type Verdict } from "./redeem_checks.ts";

/** What a redemption runs with (handed in by `Grants`). */
export interface RedemptionDeps {
  store: GrantStore;
  secrets: { has(secretId: string): boolean | Promise<boolean> };
  audit: { append(event: GrantAuditEvent): unknown };
  /** The one clock of this redemption. */
  now: number;
  /** Runs a store or vault call; a failure becomes `GRANTS_UNAVAILABLE`. */
  guard<T>(fn: () => Promise<T>): Promise<T>;
  /** Writes a refusal's row if it can. */
  tryAudit(event: GrantAuditEvent): Promise<void>;
}

/** What one `change()` decided, or the secrets it must learn first. */
type Judged =
  | { missing: Set<string> }
  | { verdicts: Verdict[]; revoking: number };

/** The most `change()`s one redemption takes to learn the secrets of grants added meanwhile. */
const REDEEM_ATTEMPTS = 4;

/** Redeems `request` (see the module's header); the redeemed grants in the order named. */
export async function redemption(request: RedeemRequest, deps: RedemptionDeps): Promise<Grant[]> {
  const { now } = deps;
  const origin = typeof request.origin === "string" ? normalizeOrigin(request.origin) : undefined;
  const useKind = (USE_KINDS as readonly string[]).includes(request.useKind)
    ? request.useKind
    : undefined;
  if (typeof request.sessionId !== "string" || request.sessionId === "") {
    throw new GrantError("GRANT_INVALID", "a redemption needs the session id");
  }
  const at = new Date(now).toISOString();
  const named = request.grantIds !== undefined ? [...new Set(request.grantIds)] : undefined;
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

  /** Judges the locked records; writes only once every secret asked about is known. */
  const plan = (records: GrantRecord[], secrets: ReadonlyMap<string, boolean>) => {
    const grants = records.map((r) => withState(r, now));
    const byId = new Map(grants.map((g) => [g.id, g]));
    const targets = named
      ? named.map((id) => {
        // A model-supplied id that is not id-shaped is not written to the audit.
        const shownId = grantIdShaped(id) ? id : null;
        return { shownId, grant: shownId ? byId.get(shownId) : undefined };
      })
      : grants.map((g) => ({ shownId: grantIdShaped(g.id) ? g.id : null, grant: g }));
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
    if (missing.size > 0) return { writes: [], result: { missing } as Judged };
    const writes: GrantWrite[] = verdicts.filter((v) => v.secretGone).map((v) => ({
      kind: "revoke",
      id: v.id!,
      by: "vault",
      reason: SECRET_REMOVED,
      at,
    }));
    const revoking = writes.length;
    const failed = verdicts.some((v) => v.refusal);
    const passing = verdicts.filter((v) => !v.refusal);
    if (!(named ? failed || passing.length === 0 : passing.length === 0)) {
      for (const v of passing) {
        writes.push({
          kind: "redeem",
          id: v.grant!.id,
          mode: v.grant!.mode,
          sessionId: request.sessionId,
          at,
        });
      }
    }
    return { writes, result: { verdicts, revoking } as Judged };
  };

  // The vault's answers, learned outside the store's lock (see `grants.ts`).
  const secrets = new Map<string, boolean>();
  const select = named ? { ids: named.filter(grantIdShaped) } : { agent: request.agent ?? "" };
  let judged: Judged | undefined;
  let redeemed: Grant[] = [];
  for (let attempt = 0; attempt < REDEEM_ATTEMPTS; attempt++) {
    if (!named && request.agent === null) {
      judged = { verdicts: [], revoking: 0 };
      break;
    }
    const change = await deps.guard(() => deps.store.change(select, (r) => plan(r, secrets)));
    judged = change.result;
    if ("missing" in judged) {
      const missing = judged.missing;
      await deps.guard(async () => {
        for (const id of missing) secrets.set(id, await deps.secrets.has(id));
      });
      continue;
    }
    // The writes after the revocations are the consumptions, in the order judged.
    const consumed = change.written.slice(judged.revoking);
    if (consumed.some((r) => r === undefined)) {
      throw new GrantError("GRANTS_UNAVAILABLE", "a grant changed while redeeming");
    }
    redeemed = consumed.map((r) => withState(r!, now));
    break;
  }
  if (!judged || "missing" in judged) {
    throw new GrantError("GRANTS_UNAVAILABLE", "the grants kept changing while redeeming");
  }
  const { verdicts } = judged;

  for (const v of verdicts.filter((v) => v.secretGone && v.grant)) {
    await deps.tryAudit(operatorRow("grant_revoke", v.grant!, "vault", "event", SECRET_REMOVED));
  }
  if (redeemed.length === 0) {
    const refused = verdicts.filter((v) => v.refusal);
    const shown = named ? refused : closest(refused);
    if (shown.length === 0) shown.push({ id: null, refusal: "GRANT_NOT_FOUND" });
    for (const v of shown) await deps.tryAudit(row(v, "deny", v.refusal!));
    const first = shown[0];
    throw refusal(first.refusal!, first.id ?? undefined);
  }
  try {
    for (const g of redeemed) await deps.audit.append(row({ id: g.id }, "allow", GRANT_REDEEMED));
  } catch (err) {
    throw auditUnavailable(err, "the redemption is refused (the grants stay consumed)");
  }
  return redeemed;
}
