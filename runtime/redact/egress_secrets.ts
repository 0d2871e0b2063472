/**
 * Credential values that may leave the browser in one request only: the filled login form's
 * own submission. Every other request whose URL, host or body carries one of them (in any
 * form the redactor matches: encodings, case, separators, any run of 8 characters) is
 * refused at the egress proxy (`SECRET_IN_REQUEST`), whatever origin it goes to and whether
 * it reads or writes: a page that saw a password typed into its field could otherwise send it
 * on with an image request to any allowed origin.
 *
 * Filled by the runtime with the vault's passwords, TOTP seeds and generic secrets (not
 * usernames: a signed-in site puts its user's name in its own URLs).
 *
 * @module
 */
import { Redactor } from "./redactor.ts";

const guarded = new Redactor();

/** The process's guarded credential values. */
export function egressSecrets(): Redactor {
  return guarded;
}

/** Whether `text` carries a guarded value. */
export function carriesEgressSecret(text: string): boolean {
  return !guarded.empty && guarded.redact(text) !== text;
}
