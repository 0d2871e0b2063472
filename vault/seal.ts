/**
 * Sealing one value: AES-256-GCM (WebCrypto) with a fresh random 96-bit nonce per seal.
 *
 * Sealed bytes: `version (1 byte) || nonce (12) || ciphertext || tag (16)`. The GCM
 * associated data is `version || aad`, so the format version is bound as well as whatever
 * the caller binds (a secret's id and kind: {@link secretAad}). Any change to the bytes, the
 * version or the associated data, or a different key, fails to open with `VAULT_TAMPERED`.
 *
 * @module
 */
import { VaultError } from "./errors.ts";

/** The format version byte this build writes and reads. */
export const SEAL_VERSION = 1;
/** Nonce length in bytes (96 bits, GCM's native size). */
export const NONCE_BYTES = 12;
/** GCM tag length in bytes. */
export const TAG_BYTES = 16;

const encoder = new TextEncoder();

/** The associated data of a secret: binds its id and kind, so a sealed value cannot move. */
export function secretAad(id: string, kind: string): Uint8Array {
  return encoder.encode(`omotai-vault/secret\0${id}\0${kind}`);
}

/** The associated data of the vault's key-check value. */
export const CHECK_AAD: Uint8Array = encoder.encode("omotai-vault/key-check");

/** Seals `plaintext` under `key`, binding `aad`; a fresh random nonce each call. */
export function seal(key: CryptoKey, plaintext: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  return sealWithNonce(key, plaintext, aad, crypto.getRandomValues(new Uint8Array(NONCE_BYTES)));
}

/**
 * {@link seal} with an explicit nonce, for the known-answer vectors only. Never reuse a
 * nonce under one key: not exported from `mod.ts`.
 */
export async function sealWithNonce(
  key: CryptoKey,
  plaintext: Uint8Array,
  aad: Uint8Array,
  nonce: Uint8Array,
): Promise<Uint8Array> {
  if (nonce.length !== NONCE_BYTES) throw new RangeError(`a nonce is ${NONCE_BYTES} bytes`);
  const ciphertext = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv: new Uint8Array(nonce), additionalData: boundAad(aad) },
      key,
      new Uint8Array(plaintext),
    ),
  );
  const out = new Uint8Array(1 + NONCE_BYTES + ciphertext.length);
  out[0] = SEAL_VERSION;
  out.set(nonce, 1);
  out.set(ciphertext, 1 + NONCE_BYTES);
  return out;
}

/** Opens bytes made by {@link seal} with the same key and `aad`; `VAULT_TAMPERED` otherwise. */
export async function open(
  key: CryptoKey,
  sealed: Uint8Array,
  aad: Uint8Array,
): Promise<Uint8Array> {
  if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES) {
    throw new VaultError("VAULT_TAMPERED", "the sealed value is too short");
  }
  if (sealed[0] !== SEAL_VERSION) {
    throw new VaultError("VAULT_TAMPERED", `unknown sealed format version ${sealed[0]}`);
  }
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt(
        {
          name: "AES-GCM",
          iv: sealed.slice(1, 1 + NONCE_BYTES),
          additionalData: boundAad(aad),
        },
        key,
        sealed.slice(1 + NONCE_BYTES),
      ),
    );
  } catch {
    // One answer for a changed byte, a moved value and a wrong key: GCM cannot tell them apart.
    throw new VaultError("VAULT_TAMPERED", "the sealed value does not authenticate");
  }
}

function boundAad(aad: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(1 + aad.length);
  out[0] = SEAL_VERSION;
  out.set(aad, 1);
  return out;
}
