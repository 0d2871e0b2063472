/**
 * TOTP seeds (RFC 6238) for the runtime-performed login: a seed from the vault, given as
 * base32 or as an `otpauth://totp/...` URI, parsed into a {@link TotpSeed} whose secret no
 * property, `toString()`, JSON or inspection shows, and codes generated from it with otplib.
 * No error message ever carries the seed (or any other part of the input): the input is a
 * secret, and errors reach logs and tool results.
 *
 * @module
 */
import { createGuardrails, generate } from "otplib";
import { OmotaiError } from "../mod.ts";

/** Every stable code a {@link TotpError} may carry. */
export type TotpErrorCode =
  /** The text is not a base32 seed or an otpauth://totp URI, or a parameter is malformed. */
  | "TOTP_SEED_INVALID"
  /** A well-formed seed of a kind the runtime does not do: HOTP, another hash, 7 digits... */
  | "TOTP_UNSUPPORTED"
  /** The time asked for is not a finite, non-negative number of milliseconds. */
  | "TOTP_TIME_INVALID"
  /** otplib failed to compute a code from a seed this module accepted. */
  | "TOTP_GENERATE_FAILED";

/** The error of everything in this module; its message never carries the seed. */
export class TotpError extends OmotaiError<TotpErrorCode> {
  constructor(code: TotpErrorCode, message: string) {
    // No `cause`: an underlying error (URL parser, otplib) may quote the input.
    super(code, message);
  }
}

/** The HMAC hash of a seed (the otpauth `algorithm` parameter). */
export type TotpAlgorithm = "SHA1" | "SHA256" | "SHA512";

/** Code lengths the runtime types; otpauth allows only these two in practice. */
export type TotpDigits = 6 | 8;

/**
 * A parsed TOTP seed. Only the parameters are visible; the secret lives outside the object,
 * so `toString()`, `JSON.stringify`, `Deno.inspect`, spreading and `structuredClone` cannot
 * show it. Dispose it (`using seed = parseTotpSeed(...)`) to wipe the secret's bytes.
 */
export interface TotpSeed extends Disposable {
  readonly algorithm: TotpAlgorithm;
  readonly digits: TotpDigits;
  /** Time step in seconds. */
  readonly period: number;
  /** A placeholder naming the parameters only. */
  toString(): string;
  /** The same placeholder, so a seed inside logged JSON shows no secret. */
  toJSON(): string;
}

/**
 * Seeds shorter than 80 bits are refused: 80 bits is the shortest any real issuer hands out
 * (16 base32 characters), so anything shorter is a truncated paste, not a seed. otplib's own
 * floor is 128 bits (RFC 4226's advice), which would refuse common real seeds.
 */
const MIN_SEED_BYTES = 10;
/** Room above SHA512's 64-byte block; HMAC hashes longer keys first, so they still work. */
const MAX_SEED_BYTES = 128;
/** otplib's own bounds for the time step. */
const MAX_PERIOD_SECONDS = 3600;

const GUARDRAILS = createGuardrails({
  MIN_SECRET_BYTES: MIN_SEED_BYTES,
  MAX_SECRET_BYTES: MAX_SEED_BYTES,
});

/** The secret of each live seed, keyed by the seed object (not a property of it). */
const SECRETS = new WeakMap<object, Uint8Array>();

class ParsedTotpSeed implements TotpSeed {
  readonly algorithm: TotpAlgorithm;
  readonly digits: TotpDigits;
  readonly period: number;

  constructor(secret: Uint8Array, algorithm: TotpAlgorithm, digits: TotpDigits, period: number) {
    this.algorithm = algorithm;
    this.digits = digits;
    this.period = period;
    SECRETS.set(this, secret);
    Object.freeze(this);
  }

  toString(): string {
    return `[TotpSeed ${this.algorithm} ${this.digits} digits ${this.period}s, secret hidden]`;
  }

  toJSON(): string {
    return this.toString();
  }

  [Symbol.dispose](): void {
    SECRETS.get(this)?.fill(0);
    SECRETS.delete(this);
  }

  /** Deno's console.log / Deno.inspect: the placeholder, whatever a future field holds. */
  [Symbol.for("Deno.customInspect")](): string {
    return this.toString();
  }

  /** node:util.inspect: the same placeholder. */
  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }
}

/**
 * Parses a TOTP seed: base32 (RFC 4648; spaces, lowercase and `=` padding tolerated) means
 * SHA1, 6 digits, 30 s; an `otpauth://totp/LABEL?secret=...&algorithm=SHA1|SHA256|SHA512
 * &digits=6|8&period=N` URI sets them (other parameters such as `issuer` are ignored).
 *
 * @throws {TotpError} `TOTP_SEED_INVALID` for malformed input, `TOTP_UNSUPPORTED` for an
 *   `otpauth://hotp` URI, another algorithm or digit count, or an authenticator export.
 */
export function parseTotpSeed(text: string): TotpSeed {
  if (typeof text !== "string") throw invalid("the TOTP seed is not text");
  const trimmed = text.trim();
  if (trimmed === "") throw invalid("the TOTP seed is empty");
  if (/^otpauth:/i.test(trimmed)) return parseUri(trimmed);
  if (/^otpauth-migration:/i.test(trimmed)) {
    throw new TotpError(
      "TOTP_UNSUPPORTED",
      "an authenticator export (otpauth-migration://) is not a seed; store one account's base32 seed or otpauth://totp URI",
    );
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(trimmed)) {
    throw invalid("the TOTP seed is a URI but not an otpauth://totp URI");
  }
  return new ParsedTotpSeed(decodeBase32(trimmed), "SHA1", 6, 30);
}

/**
 * The code of `seed` at `atMs` (Unix time in milliseconds), generated by otplib. The code is
 * as secret as the seed while it is valid: type it, never log or return it.
 *
 * @throws {TotpError} `TOTP_SEED_INVALID` for a seed not from {@link parseTotpSeed} or
 *   disposed, `TOTP_TIME_INVALID` for a bad time, `TOTP_GENERATE_FAILED` if otplib fails.
 */
export async function totpCode(seed: TotpSeed, atMs: number): Promise<string> {
  const secret = liveSecret(seed);
  checkTime(atMs);
  try {
    return await generate({
      strategy: "totp",
      secret,
      algorithm: seed.algorithm === "SHA1"
        ? "sha1"
        : seed.algorithm === "SHA256"
        ? "sha256"
        : "sha512",
      digits: seed.digits,
      period: seed.period,
      epoch: Math.floor(atMs / 1000),
      guardrails: GUARDRAILS,
    });
  } catch (err) {
    // The error's name only: its message is otplib's and is not checked for input.
    const name = err instanceof Error ? err.name : "unknown error";
    throw new TotpError("TOTP_GENERATE_FAILED", `the TOTP code could not be generated (${name})`);
  }
}

/**
 * Milliseconds from `atMs` until the code of `seed` changes, so a caller can wait for a fresh
 * code rather than type one that expires in transit.
 *
 * @throws {TotpError} as {@link totpCode}, except `TOTP_GENERATE_FAILED`.
 */
export function totpStepRemainingMs(seed: TotpSeed, atMs: number): number {
  liveSecret(seed);
  checkTime(atMs);
  const stepMs = seed.period * 1000;
  return stepMs - (atMs % stepMs);
}

function liveSecret(seed: TotpSeed): Uint8Array {
  const secret = typeof seed === "object" && seed !== null ? SECRETS.get(seed) : undefined;
  if (!secret) {
    throw invalid("the TOTP seed was not made by parseTotpSeed() or was already disposed");
  }
  return secret;
}

function checkTime(atMs: number): void {
  if (typeof atMs !== "number" || !Number.isFinite(atMs) || atMs < 0) {
    throw new TotpError(
      "TOTP_TIME_INVALID",
      "the time for a TOTP code must be a finite, non-negative Unix time in milliseconds",
    );
  }
}

function parseUri(text: string): TotpSeed {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid("the otpauth URI does not parse");
  }
  // A non-special scheme keeps the host's case; "otpauth://TOTP/" is still TOTP.
  const type = url.host.toLowerCase();
  if (type === "hotp") {
    throw new TotpError(
      "TOTP_UNSUPPORTED",
      "HOTP (counter-based, otpauth://hotp) seeds are not supported; only otpauth://totp",
    );
  }
  if (type !== "totp") {
    throw new TotpError("TOTP_UNSUPPORTED", "only otpauth://totp URIs are supported");
  }
  const params = url.searchParams;
  for (const name of ["secret", "algorithm", "digits", "period"]) {
    // Two values would leave the seed's meaning to whichever one a reader picks.
    if (params.getAll(name).length > 1) {
      throw invalid(`the otpauth URI repeats its ${name} parameter`);
    }
  }
  const secret = params.get("secret");
  if (secret === null || secret.trim() === "") {
    throw invalid("the otpauth URI has no secret parameter");
  }
  return new ParsedTotpSeed(
    decodeBase32(secret),
    parseAlgorithm(params.get("algorithm")),
    parseDigits(params.get("digits")),
    parsePeriod(params.get("period")),
  );
}

function parseAlgorithm(value: string | null): TotpAlgorithm {
  if (value === null) return "SHA1";
  const upper = value.trim().toUpperCase();
  if (upper === "SHA1" || upper === "SHA256" || upper === "SHA512") return upper;
  // The value is not echoed: it came in the same string as the secret.
  throw new TotpError(
    "TOTP_UNSUPPORTED",
    "the otpauth URI asks for an algorithm other than SHA1, SHA256 or SHA512",
  );
}

function parseDigits(value: string | null): TotpDigits {
  if (value === null) return 6;
  if (!/^\d{1,3}$/.test(value.trim())) {
    throw invalid("the otpauth URI's digits parameter is not a number");
  }
  const digits = Number(value);
  if (digits === 6 || digits === 8) return digits;
  throw new TotpError("TOTP_UNSUPPORTED", "only 6- and 8-digit TOTP codes are supported");
}

function parsePeriod(value: string | null): number {
  if (value === null) return 30;
  if (!/^\d{1,5}$/.test(value.trim())) {
    throw invalid("the otpauth URI's period parameter is not a whole number of seconds");
  }
  const period = Number(value);
  if (period < 1) throw invalid("the otpauth URI's period is zero");
  if (period > MAX_PERIOD_SECONDS) {
    throw new TotpError(
      "TOTP_UNSUPPORTED",
      `TOTP periods over ${MAX_PERIOD_SECONDS} s are not supported`,
    );
  }
  return period;
}

const BASE32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** RFC 4648 base32, decoded here so that no library error can quote the seed. */
function decodeBase32(text: string): Uint8Array {
  const chars = text.replace(/\s+/g, "").toUpperCase().replace(/=+$/, "");
  if (chars === "") throw invalid("the TOTP seed is empty");
  if (!/^[A-Z2-7]+$/.test(chars)) {
    throw invalid(
      "the TOTP seed is neither base32 (letters A-Z, digits 2-7) nor an otpauth://totp URI",
    );
  }
  // 1, 3 or 6 characters past a full 8-character group encode no whole byte: a character
  // was lost or added in the copy.
  if ([1, 3, 6].includes(chars.length % 8)) {
    throw invalid("the TOTP seed's base32 length is impossible; a character is missing or extra");
  }
  const bytes = new Uint8Array(Math.floor((chars.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let at = 0;
  for (const ch of chars) {
    buffer = ((buffer << 5) | BASE32_ALPHABET.indexOf(ch)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes[at++] = (buffer >> bits) & 0xff;
    }
  }
  if (bytes.length < MIN_SEED_BYTES) {
    bytes.fill(0);
    throw invalid(`the TOTP seed is shorter than ${MIN_SEED_BYTES * 8} bits`);
  }
  if (bytes.length > MAX_SEED_BYTES) {
    bytes.fill(0);
    throw invalid(`the TOTP seed is longer than ${MAX_SEED_BYTES * 8} bits`);
  }
  return bytes;
}

function invalid(message: string): TotpError {
  return new TotpError("TOTP_SEED_INVALID", message);
}
