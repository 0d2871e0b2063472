import assert from "node:assert/strict";
import {
  deriveKeyBytes,
  importKey,
  keyMatches,
  keySourceFrom,
  makeKeyCheck,
  passphraseKeySource,
  rawKeySource,
} from "./key.ts";
import { VaultError } from "./errors.ts";

interface ScryptVector {
  passphrase: string;
  salt: string;
  N: number;
  r: number;
  p: number;
  key: string;
}

const vectors = JSON.parse(
  await Deno.readTextFile(new URL("./testdata/vectors.json", import.meta.url)),
) as { scrypt: ScryptVector[] };

const b64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const toB64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const code = (c: string) => (err: unknown) => err instanceof VaultError && err.code === c;

Deno.test("deriveKeyBytes reproduces the checked-in scrypt vector (N=2^17, r=8, p=1)", async () => {
  for (const v of vectors.scrypt) {
    assert.deepEqual([v.N, v.r, v.p], [2 ** 17, 8, 1]);
    assert.equal(toB64(await deriveKeyBytes(v.passphrase, b64(v.salt))), v.key);
  }
});

Deno.test("rawKeySource takes 32 bytes of base64 and refuses anything else with VAULT_KEY_INVALID", () => {
  const good = toB64(crypto.getRandomValues(new Uint8Array(32)));
  assert.equal(rawKeySource(good).type, "raw");
  for (const bad of ["", "not base64!", toB64(new Uint8Array(16)), toB64(new Uint8Array(33))]) {
    assert.throws(() => rawKeySource(bad), (err) => {
      assert.ok(code("VAULT_KEY_INVALID")(err));
      assert.ok(bad === "" || !(err as Error).message.includes(bad), "no key in the message");
      return true;
    });
  }
  assert.throws(() => passphraseKeySource(""), code("VAULT_KEY_INVALID"));
});

Deno.test("keySourceFrom wants exactly one of key and passphrase", () => {
  const key = toB64(new Uint8Array(32).fill(7));
  assert.equal(keySourceFrom({ key }).type, "raw");
  assert.equal(keySourceFrom({ passphrase: "pw", key: "" }).type, "passphrase");
  assert.throws(() => keySourceFrom({ key, passphrase: "pw" }), code("VAULT_KEY_INVALID"));
  assert.throws(
    () => keySourceFrom({}, { key: "OMOTAI_VAULT_KEY", passphrase: "OMOTAI_VAULT_PASSPHRASE" }),
    /no vault key: set OMOTAI_VAULT_KEY or OMOTAI_VAULT_PASSPHRASE/,
  );
});

Deno.test("keyMatches accepts the key that made the check value and no other", async () => {
  const key = await importKey(crypto.getRandomValues(new Uint8Array(32)));
  const other = await importKey(crypto.getRandomValues(new Uint8Array(32)));
  const check = await makeKeyCheck(key);
  assert.equal(await keyMatches(key, check), true);
  assert.equal(await keyMatches(other, check), false);
});
