/**
 * The vault key: 32 bytes for AES-256-GCM, either given directly (`OMOTAI_VAULT_KEY`, base64)
 * or derived from a passphrase with scrypt at OWASP's parameters (N=2^17, r=8, p=1) and a
 * random salt the vault stores. The key is imported into WebCrypto as a non-extractable
 * `CryptoKey`; the raw bytes are not kept.
 *
 * @module
 */
import { scrypt } from "node:crypto";
import { VaultError } from "./errors.ts";
import { CHECK_AAD, open, seal } from "./seal.ts";

/** Length of a vault key in bytes (AES-256). */
export const KEY_BYTES = 32;

/** scrypt parameters (OWASP Password Storage Cheat Sheet: N=2^17, r=8, p=1). */
export const SCRYPT_PARAMS = Object.freeze({
  N: 2 ** 17,
  r: 8,
  p: 1,
  // scrypt needs 128 * N * r bytes (128 MiB here); Node's default cap is 32 MiB.
  maxmem: 256 * 1024 * 1024,
});

/** Length of the scrypt salt the vault stores, in bytes. */
export const SALT_BYTES = 16;

/** Where a vault key comes from: raw key bytes, or a passphrase derived with the vault's salt. */
export type VaultKeySource =
  | { readonly type: "raw"; readonly bytes: Uint8Array }
  | { readonly type: "passphrase"; readonly passphrase: string };

/** A key source from a base64 string of exactly 32 bytes (`VAULT_KEY_INVALID` otherwise). */
export function rawKeySource(base64: string): VaultKeySource {
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(base64.trim()), (c) => c.charCodeAt(0));
  } catch {
    throw new VaultError("VAULT_KEY_INVALID", "the vault key is not valid base64");
  }
  if (bytes.length !== KEY_BYTES) {
    throw new VaultError(
      "VAULT_KEY_INVALID",
      `the vault key must be ${KEY_BYTES} bytes in base64, not ${bytes.length} bytes`,
    );
  }
  return { type: "raw", bytes };
}

/** A key source from a passphrase (`VAULT_KEY_INVALID` when empty). */
export function passphraseKeySource(passphrase: string): VaultKeySource {
  if (passphrase.length === 0) {
    throw new VaultError("VAULT_KEY_INVALID", "the vault passphrase is empty");
  }
  return { type: "passphrase", passphrase };
}

/**
 * Picks the key source from a raw key or a passphrase, exactly one of which must be set
 * (`VAULT_KEY_INVALID` otherwise). `names` label the two in the message.
 */
export function keySourceFrom(
  given: { key?: string; passphrase?: string },
  names: { key: string; passphrase: string } = { key: "key", passphrase: "passphrase" },
): VaultKeySource {
  const key = given.key || undefined;
  const passphrase = given.passphrase || undefined;
  if (key !== undefined && passphrase !== undefined) {
    throw new VaultError("VAULT_KEY_INVALID", `set ${names.key} or ${names.passphrase}, not both`);
  }
  if (key !== undefined) return rawKeySource(key);
  if (passphrase !== undefined) return passphraseKeySource(passphrase);
  throw new VaultError(
    "VAULT_KEY_INVALID",
    `no vault key: set ${names.key} or ${names.passphrase}`,
  );
}

/** Derives the 32 key bytes from a passphrase and salt with scrypt ({@link SCRYPT_PARAMS}). */
export function deriveKeyBytes(passphrase: string, salt: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    scrypt(passphrase.normalize("NFC"), salt, KEY_BYTES, SCRYPT_PARAMS, (err, derived) => {
      if (err) reject(new VaultError("VAULT_KEY_INVALID", "scrypt key derivation failed"));
      else resolve(new Uint8Array(derived));
    });
  });
}

/** Imports 32 key bytes as a non-extractable AES-GCM `CryptoKey`. */
export function importKey(bytes: Uint8Array): Promise<CryptoKey> {
  if (bytes.length !== KEY_BYTES) {
    throw new VaultError("VAULT_KEY_INVALID", `a vault key is ${KEY_BYTES} bytes`);
  }
  return crypto.subtle.importKey("raw", new Uint8Array(bytes), "AES-GCM", false, [
    "encrypt",
    "decrypt",
  ]);
}

/** Turns a key source into a `CryptoKey`, deriving with `salt` for a passphrase. */
export async function resolveKey(source: VaultKeySource, salt: Uint8Array): Promise<CryptoKey> {
  const bytes = source.type === "raw"
    ? source.bytes
    : await deriveKeyBytes(source.passphrase, salt);
  try {
    return await importKey(bytes);
  } finally {
    if (source.type === "passphrase") bytes.fill(0);
  }
}

/** The fixed label sealed as the key-check value. */
export const KEY_CHECK_LABEL = "omotai vault key check v1";

/** Seals the key-check value under `key`. */
export function makeKeyCheck(key: CryptoKey): Promise<Uint8Array> {
  return seal(key, new TextEncoder().encode(KEY_CHECK_LABEL), CHECK_AAD);
}

/** True when `check` opens under `key` to the fixed label. */
export async function keyMatches(key: CryptoKey, check: Uint8Array): Promise<boolean> {
  try {
    const label = await open(key, check, CHECK_AAD);
    return new TextDecoder().decode(label) === KEY_CHECK_LABEL;
  } catch (err) {
    if (err instanceof VaultError && err.code === "VAULT_TAMPERED") return false;
    throw err;
  }
}
