/**
 * What a grant is: one vault secret bound to one agent, a purpose, a mode, an expiry and its
 * uses (`fill`, or one `capture`, each with the exact origins it may happen on; a capture use
 * also names its workflow and output, and its grant's secret is the target it writes into).
 * The operator's input arrives as `unknown` (CLI flags, a JSON body, a form) and becomes a
 * `NewGrant` only through `parseGrantInput()`; nothing here holds or sees a secret value. The
 * stored record (`GrantRecord`, its modes and uses) is the port's
 * (`runtime/store/grant_store.ts`).
 *
 * @module
 */
import { z } from "zod";
import { normalizeOrigin } from "../net/mod.ts";
import {
  GRANT_MODES,
  type GrantMode,
  type GrantRecord,
  type GrantUse,
  USE_KINDS,
  type UseKind,
} from "../store/mod.ts";
import { GrantError } from "./errors.ts";

export { GRANT_MODES, type GrantMode, type GrantUse, USE_KINDS, type UseKind };

/**
 * Where a grant stands, derived from its record and the clock: `pending` (no operator approved
 * it), `active` (redeemable), `used` (a `once` grant that was redeemed), `expired`, `revoked`.
 */
export type GrantState = "pending" | "active" | "used" | "expired" | "revoked";

/** The use of a capture grant: its origins, workflow and output, all present. */
export interface CaptureUse {
  readonly kind: "capture";
  readonly allowed_origins: readonly string[];
  readonly workflow: string;
  readonly output: string;
}

/** A grant as listed: its record and where it stands (derived at read time, `withState`). */
export interface Grant extends GrantRecord {
  /** Derived at read time from the record and the clock. */
  readonly state: GrantState;
}

/**
 * A grant as parsed from the operator's input, before it is stored: the operator's fields of
 * a `GrantRecord`; `expires_at` is resolved from a duration or an ISO time and always in the
 * future.
 */
export type NewGrant = Pick<
  GrantRecord,
  "secret_id" | "agent" | "purpose" | "mode" | "uses" | "expires_at"
>;

/** What a grant id looks like. */
export const GRANT_ID_RE = /^g_[a-z2-7]{16}$/;

/**
 * A secret id, as the vault spells it (`vault/vault.ts` `SECRET_ID_RE`). Repeated here
 * because grants sit below the vault's only importer (`cli/`): the layers keep `vault/` a
 * leaf reached from the top.
 */
export const GRANT_SECRET_ID_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * An agent name, as `runtime/store/agent_store.ts` `AGENT_NAME` spells it (repeated for the
 * same layering reason). The agent need not exist yet: `stdio` is the agent of a stdio
 * runtime and has no key.
 */
export const GRANT_AGENT_RE = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** An expiry when the operator gives none: a day, so a forgotten grant does not stand. */
export const DEFAULT_EXPIRY_MS = 24 * 3_600_000;

/** The longest expiry accepted: a year; a longer-lived grant is a rotation problem. */
export const MAX_EXPIRY_MS = 365 * 24 * 3_600_000;

/** The longest purpose, in characters. */
export const PURPOSE_MAX_CHARS = 200;

/** The most origins one use may list. */
export const MAX_ORIGINS = 20;

/**
 * A capture use's workflow or output name (`github_app`, `linear_oauth_app`, `pem`,
 * `client_secret`): lower case, digits and `_`, starting with a letter.
 */
export const CAPTURE_NAME_RE = /^[a-z][a-z0-9_]{0,63}$/;

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/** A fresh grant id: `g_` + base32 (lower case, no padding) of 10 random bytes. */
export function newGrantId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  let bits = 0;
  let value = 0;
  let out = "";
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `g_${out}`;
}

/**
 * `text` as an exact origin (`scheme://host[:port]`, normalized like every origin of the
 * runtime), or `GRANT_INVALID`. A path, query, fragment or credentials are refused rather than
 * cut off: the operator should see that a grant is per origin, not per page.
 */
export function grantOrigin(text: string): string {
  const bad = () =>
    new GrantError(
      "GRANT_INVALID",
      `"${text.slice(0, 200)}" is not an http(s) origin (e.g. https://portal.example)`,
    );
  const origin = normalizeOrigin(text);
  if (!origin) throw bad();
  const url = new URL(text.trim());
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    throw bad();
  }
  // URL forgives what an origin should not carry: an empty `?` or `#`, an empty `@`, inner
  // whitespace it strips.
  if (/[?#@\s\p{Cc}]|\/\/.*\//u.test(text.trim().replace(/\/$/, ""))) throw bad();
  return origin;
}

const DURATION_RE = /^(\d{1,6})([mhd])$/;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 24 * 3_600_000 };
// A time zone is required: a zoneless time would mean the runtime's local time.
const ISO_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?(Z|[+-]\d\d:\d\d)$/;

/**
 * The expiry `text` names, as an ISO time: a duration from `now` (`30m`, `24h`, `7d`) or an
 * ISO time with a zone (`2026-12-01T09:00:00Z`). Missing: `DEFAULT_EXPIRY_MS` from now. It must
 * lie in the future and at most `MAX_EXPIRY_MS` ahead, else `GRANT_INVALID`.
 */
export function parseExpiry(text: string | undefined, now: number): string {
  let at: number;
  const trimmed = text?.trim();
  if (trimmed === undefined || trimmed === "") {
    at = now + DEFAULT_EXPIRY_MS;
  } else if (DURATION_RE.test(trimmed)) {
    const [, n, unit] = DURATION_RE.exec(trimmed)!;
    at = now + Number(n) * UNIT_MS[unit];
  } else if (ISO_RE.test(trimmed) && !Number.isNaN(Date.parse(trimmed))) {
    at = Date.parse(trimmed);
  } else {
    throw new GrantError(
      "GRANT_INVALID",
      `the expiry "${
        trimmed.slice(0, 40)
      }" is neither a duration (30m, 24h, 7d) nor an ISO time with a zone`,
    );
  }
  if (at <= now) throw new GrantError("GRANT_INVALID", "the expiry lies in the past");
  if (at - now > MAX_EXPIRY_MS) {
    throw new GrantError("GRANT_INVALID", "the expiry lies more than 365 days ahead");
  }
  return new Date(at).toISOString();
}

// Control and format characters (bidi overrides, zero-width) would let a purpose rewrite the
// terminal line or the page around it.
const PLAIN_TEXT = /^[^\p{Cc}\p{Cf}]*$/u;

const Origins = z.array(z.string().max(300)).min(1).max(MAX_ORIGINS);

/**
 * The shape of one use in the input; origins are checked exactly afterwards. A fill use is
 * `{kind, allowed_origins}` as it always was; a capture use adds its `workflow` and `output`.
 */
const UseInput = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("fill"), allowed_origins: Origins }),
  z.strictObject({
    kind: z.literal("capture"),
    allowed_origins: Origins,
    workflow: z.string().regex(CAPTURE_NAME_RE),
    output: z.string().regex(CAPTURE_NAME_RE),
  }),
]);

/**
 * The operator's grant, as the CLI, the API and the form hand it in. `expires` is a duration
 * or an ISO time (see `parseExpiry`); absent, the grant lasts `DEFAULT_EXPIRY_MS`.
 */
export const GrantInputSchema = z.strictObject({
  secret_id: z.string().regex(GRANT_SECRET_ID_RE),
  agent: z.string().regex(GRANT_AGENT_RE),
  purpose: z.string().trim().min(1).max(PURPOSE_MAX_CHARS).regex(PLAIN_TEXT),
  mode: z.enum(GRANT_MODES),
  expires: z.string().max(40).optional(),
  uses: z.array(UseInput).min(1).max(USE_KINDS.length),
});

/** The input `GrantInputSchema` accepts. */
export type GrantInput = z.input<typeof GrantInputSchema>;

/**
 * Parses untrusted input into a `NewGrant`: shape, secret id and agent alphabets, a plain
 * purpose, exact origins (deduplicated), one use per kind, and the expiry resolved against
 * `now`. Throws `GrantError` `GRANT_INVALID` naming the fields at fault (never echoing a long
 * value).
 */
export function parseGrantInput(input: unknown, now: number): NewGrant {
  const result = GrantInputSchema.safeParse(input);
  if (!result.success) {
    const fields = [...new Set(result.error.issues.map((i) => i.path.join(".") || "grant"))];
    throw new GrantError("GRANT_INVALID", `invalid or missing: ${fields.join(", ")}`);
  }
  const g = result.data;
  const kinds = g.uses.map((u) => u.kind);
  if (new Set(kinds).size !== kinds.length) {
    throw new GrantError("GRANT_INVALID", "each use kind (fill, capture) may appear once");
  }
  // One grant per output, and a capture grant never fills: its one use is the capture.
  if (kinds.includes("capture") && kinds.length !== 1) {
    throw new GrantError(
      "GRANT_INVALID",
      "a capture grant has exactly one use, the capture (a capture grant never fills)",
    );
  }
  // A capture writes once into an empty secret: once-mode semantics, whatever else was asked.
  if (kinds.includes("capture") && g.mode !== "once") {
    throw new GrantError("GRANT_INVALID", "a capture grant's mode is once");
  }
  const uses: GrantUse[] = g.uses.map((u) => {
    const allowed_origins = [...new Set(u.allowed_origins.map(grantOrigin))];
    return u.kind === "capture"
      ? { kind: u.kind, allowed_origins, workflow: u.workflow, output: u.output }
      : { kind: u.kind, allowed_origins };
  });
  return {
    secret_id: g.secret_id,
    agent: g.agent,
    purpose: g.purpose,
    mode: g.mode,
    uses,
    expires_at: parseExpiry(g.expires, now),
  };
}

/**
 * The capture use of a capture grant: the grant's only use, of kind `capture`, with its
 * workflow and output; undefined for any other grant (a fill grant, or a damaged capture use
 * without its binding, which captures nothing).
 */
export function captureUseOf(grant: Pick<Grant, "uses">): CaptureUse | undefined {
  if (grant.uses.length !== 1) return undefined;
  const [use] = grant.uses;
  if (use.kind !== "capture") return undefined;
  if (typeof use.workflow !== "string" || typeof use.output !== "string") return undefined;
  return {
    kind: "capture",
    allowed_origins: use.allowed_origins,
    workflow: use.workflow,
    output: use.output,
  };
}

/**
 * Whether `grant` is for capture (it has a capture use, bound or not): such a grant never
 * fills. Each redemption path accepts only its own kind.
 */
export function isCaptureGrant(grant: Pick<Grant, "uses">): boolean {
  return grant.uses.some((u) => u.kind === "capture");
}

/** The fields `grantState()` reads. */
export interface GrantStateFields {
  readonly mode: GrantMode;
  readonly expires_at: string;
  readonly approved_at: string | null;
  readonly revoked_at: string | null;
  readonly used_at: string | null;
}

/**
 * Where a grant stands at `now`. Revoked wins over everything, then expiry (a pending grant
 * that expired can no longer be approved), then pending, then a used `once` grant.
 */
export function grantState(g: GrantStateFields, now: number): GrantState {
  if (g.revoked_at !== null) return "revoked";
  const expires = Date.parse(g.expires_at);
  // A damaged expiry never reads as "still valid".
  if (Number.isNaN(expires) || expires <= now) return "expired";
  if (g.approved_at === null) return "pending";
  if (g.mode === "once" && g.used_at !== null) return "used";
  return "active";
}

/** Record `r` as a `Grant`, its state derived at `now` (fields in the record's order). */
export function withState(r: GrantRecord, now: number): Grant {
  const { id, secret_id, agent, purpose, mode, uses, ...rest } = r;
  return { id, secret_id, agent, purpose, mode, uses, state: grantState(r, now), ...rest };
}
