/**
 * The checks a capture passes before anything is minted, in their fixed order, and the
 * refusal each failure becomes. A capture (a reviewed workflow such as `github_app` writing
 * the credentials a vendor mints) names one grant per output; each grant must be a capture
 * grant of the agent, approved, live, unused, bound to the document's exact origin, to the
 * workflow and to that output, and its target secret id must still be empty in the vault.
 *
 * Pure: no table, no clock and no vault of their own. `Grants` (`grants.ts`) reads the
 * grants from its store and asks the vault, then calls these; `checkCapture` writes
 * nothing but its audit rows, `consumeCapture` marks the grant used after the write.
 *
 * @module
 */
import { normalizeOrigin } from "../net/mod.ts";
import {
  GRANT_CHECK_ORDER,
  GRANT_REFUSAL_TEXT,
  GrantError,
  type GrantErrorCode,
} from "./errors.ts";
import { CAPTURE_NAME_RE, captureUseOf, type Grant, GRANT_ID_RE, isCaptureGrant } from "./grant.ts";

/** One output of a capture and the grant approved for it. */
export interface CaptureOutput {
  /** The workflow's output name (`pem`, `client_secret`, `webhook_secret`). */
  output: string;
  grantId: string;
}

/** A capture about to happen: who, where, which workflow, and each output's grant. */
export interface CaptureCheckRequest {
  /** The agent of the session (its key's name; `stdio` for a stdio runtime). */
  agent: string | null;
  /**
   * The origin the values come from, as the runtime read it (the validated callback origin,
   * the document holding the values); a URL is cut to its origin. Never the model's.
   */
  origin: string;
  /** The reviewed workflow (`github_app`, `linear_oauth_app`). */
  workflow: string;
  /** One grant per output; at least one, no output or grant twice. */
  outputs: readonly CaptureOutput[];
  /** The session, for the audit rows (optional: a check binds nothing to it). */
  sessionId?: string;
}

/** The consumption of one capture grant after its value was written. */
export interface CaptureConsumeRequest {
  agent: string | null;
  origin: string;
  workflow: string;
  output: string;
  /** The session, for the audit row. */
  sessionId?: string;
}

/** Where one checked output will be written: its grant's secret id (the target ref). */
export interface CaptureTarget {
  output: string;
  grantId: string;
  secretId: string;
}

/** Capture refusals in the order the checks run. */
export const CAPTURE_CHECK_ORDER: readonly GrantErrorCode[] = [
  ...GRANT_CHECK_ORDER,
  "GRANT_WRONG_WORKFLOW",
  "GRANT_WRONG_OUTPUT",
  "CAPTURE_TARGET_OCCUPIED",
];

const CAPTURE_TEXT: Partial<Record<GrantErrorCode, string>> = {
  ...GRANT_REFUSAL_TEXT,
  GRANT_USED: "the capture grant was used already",
  GRANT_WRONG_USE: "the grant is not a capture grant",
  GRANT_WRONG_WORKFLOW: "the grant is for another workflow",
  GRANT_WRONG_OUTPUT: "the grant is for another output",
  CAPTURE_TARGET_OCCUPIED: "the target secret already holds a value",
  CAPTURE_TARGET_DUPLICATE: "two outputs would write into one secret",
};

/** One output's verdict: its grant, and the refusal if it failed. */
export interface CaptureVerdict {
  output: string;
  /** The grant id when it is id-shaped (anything else is never audited). */
  id: string | null;
  grant?: Grant;
  refusal?: GrantErrorCode;
}

/** A request whose shape was checked: the origin normalized (undefined: none matches). */
export interface ValidCapture {
  agent: string | null;
  origin: string | undefined;
  workflow: string;
  outputs: readonly CaptureOutput[];
  sessionId: string | null;
}

/**
 * The shape of a check request, or `GRANT_INVALID`: a workflow name, at least one output, each
 * with an output name and a grant id (a string), no output and no grant twice (one grant per
 * output). The origin is normalized; an unreadable one becomes undefined and fails
 * `GRANT_WRONG_ORIGIN` per grant, as in a redemption.
 */
export function validateCaptureRequest(request: CaptureCheckRequest): ValidCapture {
  const invalid = (what: string) => new GrantError("GRANT_INVALID", `a capture needs ${what}`);
  if (request === null || typeof request !== "object") throw invalid("a request");
  if (typeof request.workflow !== "string" || !CAPTURE_NAME_RE.test(request.workflow)) {
    throw invalid("a workflow name");
  }
  if (!Array.isArray(request.outputs) || request.outputs.length === 0) {
    throw invalid("at least one output");
  }
  const outputs: CaptureOutput[] = [];
  for (const o of request.outputs) {
    if (
      o === null || typeof o !== "object" || typeof o.output !== "string" ||
      !CAPTURE_NAME_RE.test(o.output) || typeof o.grantId !== "string"
    ) {
      throw invalid("each output's name and grant id");
    }
    outputs.push({ output: o.output, grantId: o.grantId });
  }
  if (new Set(outputs.map((o) => o.output)).size !== outputs.length) {
    throw invalid("each output once");
  }
  if (new Set(outputs.map((o) => o.grantId)).size !== outputs.length) {
    throw invalid("one grant per output (a grant named twice)");
  }
  return {
    agent: typeof request.agent === "string" ? request.agent : null,
    origin: typeof request.origin === "string" ? normalizeOrigin(request.origin) : undefined,
    workflow: request.workflow,
    outputs,
    sessionId: typeof request.sessionId === "string" && request.sessionId !== ""
      ? request.sessionId
      : null,
  };
}

/** Whether `id` looks like a grant id (anything else is never looked up or audited). */
export function grantIdShaped(id: unknown): id is string {
  return typeof id === "string" && GRANT_ID_RE.test(id);
}

/**
 * The checks of one output, in `CAPTURE_CHECK_ORDER`: `grant` is the one read for the output's
 * grant id (undefined when there is none), `occupied` the vault's answer for the grant's
 * secret id (asked only when every other check passed). `checkTarget: false` skips the last
 * check (the consumption after the write, when the target holds the value just written).
 */
export function judgeCapture(
  out: CaptureOutput,
  grant: Grant | undefined,
  request: Pick<ValidCapture, "agent" | "origin" | "workflow">,
  occupied: (secretId: string) => boolean,
  checkTarget = true,
): CaptureVerdict {
  const id = grantIdShaped(out.grantId) ? out.grantId : null;
  if (!grant || id === null) return { output: out.output, id, refusal: "GRANT_NOT_FOUND" };
  const verdict = (refusal?: GrantErrorCode): CaptureVerdict => ({
    output: out.output,
    id: grant.id,
    grant,
    refusal,
  });
  if (request.agent === null || grant.agent !== request.agent) {
    return verdict("GRANT_WRONG_AGENT");
  }
  if (grant.state === "revoked") return verdict("GRANT_REVOKED");
  if (grant.state === "expired") return verdict("GRANT_EXPIRED");
  if (grant.state === "pending") return verdict("GRANT_PENDING");
  // Once-mode semantics for every capture grant: one that was consumed wrote already.
  if (grant.state === "used" || grant.used_at !== null) {
    return verdict("GRANT_USED");
  }
  const use = captureUseOf(grant);
  // A fill grant never writes; neither does a capture use that lost its binding.
  if (!use || !isCaptureGrant(grant)) return verdict("GRANT_WRONG_USE");
  // Exact string equality of normalized origins, as for a fill.
  if (request.origin === undefined || !use.allowed_origins.includes(request.origin)) {
    return verdict("GRANT_WRONG_ORIGIN");
  }
  if (use.workflow !== request.workflow) return verdict("GRANT_WRONG_WORKFLOW");
  if (use.output !== out.output) return verdict("GRANT_WRONG_OUTPUT");
  if (checkTarget && occupied(grant.secret_id)) return verdict("CAPTURE_TARGET_OCCUPIED");
  return verdict();
}

/**
 * Every output's verdict, then the request-wide check: two passing outputs whose grants target
 * the same secret id are both refused `CAPTURE_TARGET_DUPLICATE` (the second write would fail
 * after the vendor minted).
 */
export function judgeCaptureAll(
  request: ValidCapture,
  grants: ReadonlyMap<string, Grant>,
  occupied: (secretId: string) => boolean,
): CaptureVerdict[] {
  const verdicts = request.outputs.map((o) =>
    judgeCapture(o, grants.get(o.grantId), request, occupied)
  );
  const targets = new Map<string, number>();
  for (const v of verdicts) {
    if (v.grant) targets.set(v.grant.secret_id, (targets.get(v.grant.secret_id) ?? 0) + 1);
  }
  return verdicts.map((v) =>
    !v.refusal && v.grant && targets.get(v.grant.secret_id)! > 1
      ? { ...v, refusal: "CAPTURE_TARGET_DUPLICATE" }
      : v
  );
}

/**
 * The `GrantError` of a capture refusal, naming the output and the grant; `after` ends the
 * message (a check: nothing was written).
 */
export function captureRefusal(
  v: Pick<CaptureVerdict, "output" | "id" | "refusal">,
  after = "; nothing was written",
): GrantError {
  const code = v.refusal!;
  const text = CAPTURE_TEXT[code] ?? code;
  return new GrantError(code, `output ${v.output}: ${text}${v.id ? ` (${v.id})` : ""}${after}`);
}

/** The targets of passing verdicts, in the order of the outputs. */
export function targetsOf(verdicts: readonly CaptureVerdict[]): CaptureTarget[] {
  return verdicts.map((v) => ({
    output: v.output,
    grantId: v.grant!.id,
    secretId: v.grant!.secret_id,
  }));
}

/** `CAPTURE_TARGET_OCCUPIED` for a capture grant added over a secret that holds a value. */
export function occupiedTarget(secretId: string): GrantError {
  return new GrantError(
    "CAPTURE_TARGET_OCCUPIED",
    `the vault already holds ${secretId}: a capture writes only into an empty secret id`,
  );
}
