/**
 * Random tokens and constant-time comparison for the console's credentials (admin token,
 * session ids, CSRF tokens).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { createHash, timingSafeEqual } from "node:crypto";

/** `bytes` random bytes as base64url (URL- and cookie-safe). */
export function randomToken(bytes = 32): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

/**
 * True when `given` equals `expected`, in time that depends on neither: both are hashed
 * first, so lengths differ without showing and `timingSafeEqual` compares equal sizes.
 */
/**
 * The operator's credential: the admin token itself, or a check of a presented one (a shared
 * store's tenant token, known by its hash).
 */
export type AdminCredential = string | ((presented: string) => boolean);

/**
 * True when `presented` is the admin token `credential` stands for. A check that cannot be
 * made now (its store unreachable) throws: the caller answers 503 and counts no failed guess.
 */
export function isAdminToken(presented: string, credential: AdminCredential): boolean {
  return typeof credential === "string" ? sameSecret(presented, credential) : credential(presented);
}

export function sameSecret(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b) && expected.length > 0;
}
