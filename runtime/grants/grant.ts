/**
 * What a grant is: one vault secret bound to one agent, a purpose, a mode, an expiry and its
 * uses (`fill` and/or `capture`, each with the exact origins it may happen on). The operator's
 * input arrives as `unknown` (CLI flags, a JSON body, a form) and becomes a `NewGrant` only
 * through `parseGrantInput()`; nothing here holds or sees a secret value.
 *
 * Records are snake_case (`secret_id`, `allowed_origins`, `expires_at`) because they are the
 * wire and table shape the console's API returns as is.
 *
 * @module
 */
import { z } from "zod";
import { normalizeOrigin } from "../net/origin.ts";
import { GrantError } from "./errors.ts";

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
 * Where a grant stands, derived from its record and the clock: `pending` (no operator approved
 * it), `active` (redeemable), `used` (a `once` grant that was redeemed), `expired`, `revoked`.
 */
export type GrantState = "pending" | "active" | "used" | "expired" | "revoked";

/** One use of a grant: its kind and the exact origins (normalized) it may happen on. */
export interface GrantUse {
  readonly kind: UseKind;
  readonly allowed_origins: readonly string[];
}

/** A grant as stored and listed (never a secret value: the vault keeps those). */
export interface Grant {
  /** `g_` and 16 base32 characters (80 random bits): not guessable, safe in a path. */
  readonly id: string;
  readonly secret_id: string;
  readonly agent: string;
  readonly purpose: string;
  readonly mode: GrantMode;
  readonly uses: readonly GrantUse[];
  /** Derived at read time from the record and the clock. */
  readonly state: GrantState;
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

/** A grant as parsed from the operator's input, before it is stored. */
export interface NewGrant {
  readonly secret_id: string;
  readonly agent: string;
  readonly purpose: string;
  readonly mode: GrantMode;
  readonly uses: readonly GrantUse[];
  /** ISO time, resolved from a duration or an ISO time; always in the future. */
  readonly expires_at: string;
}

/** What a grant id looks like. */
export const GRANT_ID_RE = /^g_[a-z2-7]{16}$/;

/**
 * A secret id, as the vault spells it (`vault/vault.ts` `SECRET_ID_RE`). Repeated here
 * because grants sit below the vault's only importer (`cli/`): the layers keep `vault/` a
 * leaf reached from the top.
 */
export const GRANT_SECRET_ID_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/**
 * An agent name, as `runtime/agents/agent_keys.ts` `AGENT_NAME` spells it (repeated for the
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

/** The shape of one use in the input; origins are checked exactly afterwards. */
const UseInput = z.strictObject({
  kind: z.enum(USE_KINDS),
  allowed_origins: z.array(z.string().max(300)).min(1).max(MAX_ORIGINS),
});

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
  const uses = g.uses.map((u) => ({
    kind: u.kind,
    allowed_origins: [...new Set(u.allowed_origins.map(grantOrigin))],
  }));
  return {
    secret_id: g.secret_id,
    agent: g.agent,
    purpose: g.purpose,
    mode: g.mode,
    uses,
    expires_at: parseExpiry(g.expires, now),
  };
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
