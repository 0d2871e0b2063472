import assert from "node:assert/strict";
import {
  generateKeyPair,
  type Manifest,
  PolicySignatureError,
  signModule,
  verifyModule,
} from "./signing.ts";

const manifest: Manifest = { name: "baseline", version: "1.0.0", abi: 1, kind: "rule" };
const wasm = new TextEncoder().encode("\0asm pretend module bytes");

const code = (c: string) => (e: unknown) => e instanceof PolicySignatureError && e.code === c;

Deno.test("verifyModule() accepts a module signed by a trusted key", async () => {
  const k = await generateKeyPair();
  const sig = await signModule(wasm, manifest, k.private_key, k.public_key);
  const out = await verifyModule(wasm, sig, [k.public_key]);
  assert.deepEqual(out.manifest, manifest);
});

Deno.test("verifyModule() refuses unsigned, tampered, wrong-key and stripped modules", async () => {
  const k = await generateKeyPair();
  const other = await generateKeyPair();
  const sig = await signModule(wasm, manifest, k.private_key, k.public_key);
  await assert.rejects(
    () => verifyModule(wasm, undefined, [k.public_key]),
    code("SIGNATURE_MISSING"),
  );
  const tampered = new Uint8Array(wasm);
  tampered[5] ^= 1;
  await assert.rejects(() => verifyModule(tampered, sig, [k.public_key]), code("HASH_MISMATCH"));
  await assert.rejects(() => verifyModule(wasm, sig, [other.public_key]), code("KEY_NOT_TRUSTED"));
  await assert.rejects(
    () => verifyModule(wasm, { ...sig, signature: "" }, [k.public_key]),
    code("SIGNATURE_MALFORMED"),
  );
  const forged = { ...sig, manifest: { ...manifest, kind: "classifier" } };
  await assert.rejects(() => verifyModule(wasm, forged, [k.public_key]), code("SIGNATURE_INVALID"));
  const swapped = {
    ...sig,
    signature: (await signModule(wasm, manifest, other.private_key, other.public_key)).signature,
  };
  await assert.rejects(
    () => verifyModule(wasm, swapped, [k.public_key]),
    code("SIGNATURE_INVALID"),
  );
});
