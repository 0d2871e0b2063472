import assert from "node:assert/strict";
import { importKey } from "./key.ts";
import { NONCE_BYTES, open, seal, SEAL_VERSION, sealWithNonce, secretAad } from "./seal.ts";
import { VaultError } from "./errors.ts";

interface SealVector {
  key: string;
  nonce: string;
  id: string;
  kind: string;
  plaintext: string;
  version: number;
  sealed: string;
}

const vectors = JSON.parse(
  await Deno.readTextFile(new URL("./testdata/vectors.json", import.meta.url)),
) as { seal: SealVector[] };

const b64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const toB64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const enc = new TextEncoder();
const dec = new TextDecoder();

const tampered = (err: unknown) => err instanceof VaultError && err.code === "VAULT_TAMPERED";

Deno.test("sealWithNonce reproduces the checked-in known-answer vectors and open reverses them", async () => {
  assert.ok(vectors.seal.length > 0);
  for (const v of vectors.seal) {
    assert.equal(v.version, SEAL_VERSION);
    const key = await importKey(b64(v.key));
    const aad = secretAad(v.id, v.kind);
    const sealed = await sealWithNonce(key, enc.encode(v.plaintext), aad, b64(v.nonce));
    assert.equal(toB64(sealed), v.sealed);
    assert.equal(dec.decode(await open(key, b64(v.sealed), aad)), v.plaintext);
  }
});

Deno.test("seal uses a fresh nonce each time and lays out version || nonce || ciphertext || tag", async () => {
  const key = await importKey(crypto.getRandomValues(new Uint8Array(32)));
  const aad = secretAad("a", "generic");
  const a = await seal(key, enc.encode("same"), aad);
  const b = await seal(key, enc.encode("same"), aad);
  assert.equal(a[0], SEAL_VERSION);
  assert.equal(a.length, 1 + NONCE_BYTES + 4 + 16);
  assert.notDeepEqual(a.slice(1, 1 + NONCE_BYTES), b.slice(1, 1 + NONCE_BYTES));
  assert.equal(dec.decode(await open(key, b, aad)), "same");
});

Deno.test("open refuses a flipped byte, another id or kind, a wrong key and a bad version with VAULT_TAMPERED", async () => {
  const v = vectors.seal[0];
  const key = await importKey(b64(v.key));
  const sealed = b64(v.sealed);
  const aad = secretAad(v.id, v.kind);
  for (let i = 0; i < sealed.length; i++) {
    const copy = sealed.slice();
    copy[i] ^= 0x01;
    await assert.rejects(open(key, copy, aad), tampered, `byte ${i}`);
  }
  await assert.rejects(open(key, sealed, secretAad("other.login", v.kind)), tampered);
  await assert.rejects(open(key, sealed, secretAad(v.id, "generic")), tampered);
  await assert.rejects(open(key, sealed.slice(0, 20), aad), tampered);
  const wrong = await importKey(new Uint8Array(32));
  await assert.rejects(open(wrong, sealed, aad), (err) => {
    assert.ok(tampered(err));
    assert.ok(!(err as Error).message.includes(v.plaintext));
    return true;
  });
});
