/**
 * The checks a grant passes to be redeemed, in their fixed order, and the refusal each
 * failure becomes. Split from `redemption.ts`: these are pure (no table, no clock of their
 * own); the redemption reads the grants from the store and writes the outcome.
 *
 * @module
 */
import {
  GRANT_CHECK_ORDER,
  GRANT_REFUSAL_TEXT,
  GrantError,
  type GrantErrorCode,
} from "./errors.ts";
import { type Grant, isCaptureGrant, type UseKind } from "./grant.ts";

/** One redemption (a fill; capture grants have `checkCapture`/`consumeCapture`). */
export interface RedeemRequest {
  /** The agent of the session (its key's name; `stdio` for a stdio runtime). */
  agent: string | null;
  /** `fill`: the only kind this path redeems (`capture` is refused, `GRANT_WRONG_USE`). */
  useKind: UseKind;
  /** The document's origin as read from CDP (a URL is cut to its origin); never the model's. */
  origin: string;
  sessionId: string;
  /**
   * The grants to redeem, all or none. Absent: every grant of the agent that passes every
   * check is redeemed (and, for `once`, used up), so a caller that knows its grants names them.
   */
  grantIds?: readonly string[];
  /** The clock (tests); default the store's. */
  now?: number;
}

/** Refusals in the order the checks run; a later one means the grant came closer to passing. */
const CHECK_ORDER: readonly GrantErrorCode[] = [...GRANT_CHECK_ORDER, "GRANT_WRONG_SESSION"];

const REFUSAL_TEXT: Partial<Record<GrantErrorCode, string>> = {
  ...GRANT_REFUSAL_TEXT,
  GRANT_USED: "the once grant was used already",
  GRANT_WRONG_USE: "the grant does not allow this use",
  GRANT_WRONG_SESSION: "the session grant is bound to another session",
};

/** One redemption candidate and why it failed, if it did. */
export interface Verdict {
  id: string | null;
  grant?: Grant;
  refusal?: GrantErrorCode;
  /** Its secret left the vault: revoked as part of this redemption. */
  secretGone?: boolean;
}

/**
 * The checks of one grant, in `CHECK_ORDER`: `grant` is the one read for `shownId` (undefined
 * when there is none), `origin` the normalized document origin, `secretExists` the vault's
 * answer for the grant's secret.
 */
export function judgeGrant(
  shownId: string | null,
  grant: Grant | undefined,
  request: RedeemRequest,
  origin: string | undefined,
  useKind: UseKind | undefined,
  secretExists: (secretId: string) => boolean,
): Verdict {
  if (!grant) return { id: shownId, refusal: "GRANT_NOT_FOUND" };
  const verdict = (refusal?: GrantErrorCode, secretGone?: boolean): Verdict => ({
    id: grant.id,
    grant,
    refusal,
    secretGone,
  });
  if (request.agent === null || grant.agent !== request.agent) {
    return verdict("GRANT_WRONG_AGENT");
  }
  if (grant.state === "revoked") return verdict("GRANT_REVOKED");
  // This path fills and only fills: a capture grant (whose secret is empty until its capture
  // writes it) is refused here before its secret is looked at, so it is never taken for a
  // grant whose secret left the vault. Capture has its own path (`capture_checks.ts`).
  if (useKind !== "fill" || isCaptureGrant(grant)) return verdict("GRANT_WRONG_USE");
  if (!secretExists(grant.secret_id)) return verdict("GRANT_REVOKED", true);
  if (grant.state === "expired") return verdict("GRANT_EXPIRED");
  if (grant.state === "pending") return verdict("GRANT_PENDING");
  if (grant.state === "used") return verdict("GRANT_USED");
  const use = grant.uses.find((u) => u.kind === useKind);
  if (!use) return verdict("GRANT_WRONG_USE");
  // Exact string equality of normalized origins: 127.0.0.2, another port or scheme, a
  // trailing dot or a longer host are all other origins.
  if (origin === undefined || !use.allowed_origins.includes(origin)) {
    return verdict("GRANT_WRONG_ORIGIN");
  }
  if (
    grant.mode === "session" && grant.session_id !== null &&
    grant.session_id !== request.sessionId
  ) {
    return verdict("GRANT_WRONG_SESSION");
  }
  return verdict();
}

/** The refusals that came furthest in `CHECK_ORDER` (the first such, oldest grant first). */
export function closest(refused: readonly Verdict[]): Verdict[] {
  let best: Verdict | undefined;
  for (const v of refused) {
    if (!best || CHECK_ORDER.indexOf(v.refusal!) > CHECK_ORDER.indexOf(best.refusal!)) best = v;
  }
  return best ? [best] : [];
}

/** The `GrantError` of a refusal, naming the grant `id` when there is one. */
export function refusal(code: GrantErrorCode, id?: string): GrantError {
  const text = REFUSAL_TEXT[code] ?? code;
  return new GrantError(code, id ? `${text} (${id})` : text);
}
