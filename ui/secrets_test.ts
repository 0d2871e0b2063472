import assert from "node:assert/strict";
import { randomToken, sameSecret } from "./secrets.ts";

Deno.test("sameSecret() is true only for the same non-empty string", () => {
  const token = randomToken();
  assert.equal(sameSecret(token, token), true);
  assert.equal(sameSecret(`${token}x`, token), false);
  assert.equal(sameSecret(token.slice(0, -1), token), false);
  assert.equal(sameSecret("", ""), false, "an empty secret opens nothing");
});

Deno.test("randomToken() is base64url of the given bytes and differs each time", () => {
  assert.match(randomToken(), /^[A-Za-z0-9_-]{43}$/);
  assert.match(randomToken(12), /^[A-Za-z0-9_-]{16}$/);
  assert.notEqual(randomToken(), randomToken());
});
