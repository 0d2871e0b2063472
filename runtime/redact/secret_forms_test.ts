import assert from "node:assert/strict";
import { b64, concat, expectedForms, utf8 } from "../eval/encodings.ts";
import { MIN_SECRET_LENGTH, secretForms } from "./secret_forms.ts";

/** A value with every character class an encoder treats differently. */
const PLANTED = "p@ss w0rd/&<x>\"'é😀+~*";

Deno.test("secretForms() includes every encoding of a planted value", () => {
  const forms = new Set(secretForms(PLANTED));
  for (const [name, form] of Object.entries(expectedForms(PLANTED))) {
    assert.ok(forms.has(form), `${name} missing: ${form}`);
  }
  assert.deepEqual([...forms], [...forms].sort((a, b) => b.length - a.length), "longest first");
});

Deno.test("secretForms() is empty below MIN_SECRET_LENGTH characters", () => {
  assert.equal(MIN_SECRET_LENGTH, 4);
  assert.deepEqual(secretForms(""), []);
  assert.deepEqual(secretForms("abc"), []);
  // Three characters, even when they take more UTF-16 units.
  assert.deepEqual(secretForms("😀😀😀"), []);
  assert.ok(secretForms("abcd").includes("abcd"));
  assert.ok(secretForms("abcd").every((f) => f.length >= MIN_SECRET_LENGTH));
});

Deno.test("secretForms() includes base64 at every alignment", () => {
  const value = "hunter2-sekret";
  const forms = secretForms(value);
  for (let lead = 0; lead < 6; lead++) {
    for (let trail = 0; trail < 4; trail++) {
      const encoded = b64(concat(utf8("x".repeat(lead)), utf8(value), utf8("y".repeat(trail))));
      assert.ok(
        forms.some((f) => encoded.includes(f)),
        `no form found in base64 with ${lead} bytes before and ${trail} after: ${encoded}`,
      );
    }
  }
});
