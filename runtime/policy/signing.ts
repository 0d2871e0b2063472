/**
 * Ed25519 signatures over policy modules (WebCrypto). A signature covers the SHA-256 of the
 * wasm and its manifest; the runtime loads a module only when the signature verifies
 * against a trusted key. A configured trust store never accepts a missing signature.
 *
 * @module
 */
import { z } from "zod";
import { OmotaiError } from "../mod.ts";

/** What a signature binds besides the wasm bytes. */
export const ManifestSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
  version: z.string().regex(/^\d+\.\d+\.\d+$/),
  abi: z.int().min(1),
  kind: z.enum(["rule", "classifier"]),
});

/** A module manifest. */
export type Manifest = z.infer<typeof ManifestSchema>;

/** The `.sig.json` file beside a module. */
export const SignatureFileSchema = z.strictObject({
  manifest: ManifestSchema,
  wasm_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  key_id: z.string().regex(/^[0-9a-f]{16}$/),
  signature: z.string().min(1),
});

/** A parsed signature file. */
export type SignatureFile = z.infer<typeof SignatureFileSchema>;

/** Why a module's signature does not verify. */
export type PolicySignatureCode =
  | "SIGNATURE_MISSING"
  | "SIGNATURE_MALFORMED"
  | "SIGNATURE_INVALID"
  | "HASH_MISMATCH"
  | "KEY_NOT_TRUSTED";

/** A signing failure with a stable code. */
export class PolicySignatureError extends OmotaiError<PolicySignatureCode> {}

/** A key pair, both halves base64 (public: raw 32 bytes; private: PKCS#8). */
export interface KeyPair {
  public_key: string;
  private_key: string;
  key_id: string;
}

/** Generates an Ed25519 key pair. */
export async function generateKeyPair(): Promise<KeyPair> {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const pub = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
  const priv = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  return { public_key: b64(pub), private_key: b64(priv), key_id: await keyId(b64(pub)) };
}

/** The short id of a public key: the first 16 hex digits of its SHA-256. */
export async function keyId(publicKey: string): Promise<string> {
  return (await sha256Hex(unb64(publicKey))).slice(0, 16);
}

/** Hex SHA-256 of bytes. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The exact bytes that are signed. */
export function signedPayload(manifest: Manifest, wasmSha256: string): Uint8Array {
  const canonical = JSON.stringify({
    abi: manifest.abi,
    kind: manifest.kind,
    name: manifest.name,
    version: manifest.version,
    wasm_sha256: wasmSha256,
  });
  return new TextEncoder().encode(`omotai-policy-v1\n${canonical}`);
}

/** Signs a module. */
export async function signModule(
  wasm: Uint8Array,
  manifest: Manifest,
  privateKey: string,
  publicKey: string,
): Promise<SignatureFile> {
  const key = await crypto.subtle.importKey(
    "pkcs8",
    unb64(privateKey) as BufferSource,
    { name: "Ed25519" },
    false,
    ["sign"],
  );
  const digest = await sha256Hex(wasm);
  const sig = new Uint8Array(
    await crypto.subtle.sign("Ed25519", key, signedPayload(manifest, digest) as BufferSource),
  );
  return {
    manifest: ManifestSchema.parse(manifest),
    wasm_sha256: digest,
    key_id: await keyId(publicKey),
    signature: b64(sig),
  };
}

/**
 * Verifies a module against trusted public keys; returns its manifest. Throws
 * `PolicySignatureError` with SIGNATURE_MISSING, SIGNATURE_MALFORMED, HASH_MISMATCH,
 * KEY_NOT_TRUSTED or SIGNATURE_INVALID.
 */
export async function verifyModule(
  wasm: Uint8Array,
  signatureFile: unknown,
  trustedKeys: readonly string[],
  name = "module",
): Promise<{ manifest: Manifest; sha256: string; keyId: string }> {
  if (signatureFile === undefined || signatureFile === null) {
    throw new PolicySignatureError("SIGNATURE_MISSING", `${name} has no signature`);
  }
  const parsed = SignatureFileSchema.safeParse(signatureFile);
  if (!parsed.success) {
    throw new PolicySignatureError(
      "SIGNATURE_MALFORMED",
      `${name}: the signature file is malformed`,
    );
  }
  const sig = parsed.data;
  const digest = await sha256Hex(wasm);
  if (digest !== sig.wasm_sha256) {
    throw new PolicySignatureError(
      "HASH_MISMATCH",
      `${name}: the wasm does not match its signature (tampered?)`,
    );
  }
  let trusted: string | undefined;
  for (const k of trustedKeys) if (await keyId(k) === sig.key_id) trusted = k;
  if (!trusted) {
    throw new PolicySignatureError(
      "KEY_NOT_TRUSTED",
      `${name} is signed by key ${sig.key_id}, which is not in trusted_keys`,
    );
  }
  let ok = false;
  try {
    const key = await crypto.subtle.importKey(
      "raw",
      unb64(trusted) as BufferSource,
      { name: "Ed25519" },
      false,
      ["verify"],
    );
    ok = await crypto.subtle.verify(
      "Ed25519",
      key,
      unb64(sig.signature) as BufferSource,
      signedPayload(sig.manifest, digest) as BufferSource,
    );
  } catch {
    ok = false;
  }
  if (!ok) {
    throw new PolicySignatureError("SIGNATURE_INVALID", `${name}: the signature does not verify`);
  }
  return { manifest: sig.manifest, sha256: digest, keyId: sig.key_id };
}

function b64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function unb64(text: string): Uint8Array {
  try {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  } catch {
    return new Uint8Array();
  }
}
