import assert from "node:assert/strict";
import { adminToken } from "./admin_token.ts";

const codeIs = (code: string) => (e: unknown) => (e as { code?: string }).code === code;

Deno.test("adminToken() generates 32 random bytes as base64url when OMOTAI_ADMIN_TOKEN is unset", () => {
  const a = adminToken(undefined);
  const b = adminToken("");
  for (const t of [a, b]) {
    assert.equal(t.generated, true);
    assert.match(t.token, /^[A-Za-z0-9_-]{43}$/);
  }
  assert.notEqual(a.token, b.token);
});

Deno.test("adminToken() takes OMOTAI_ADMIN_TOKEN of 32 or more characters as it is", () => {
  const env = "x".repeat(31) + "!";
  assert.deepEqual(adminToken(env), { token: env, generated: false });
  const long = "0123456789abcdef".repeat(8);
  assert.deepEqual(adminToken(long), { token: long, generated: false });
});

Deno.test("adminToken() refuses a short or non-ASCII token with ADMIN_TOKEN_WEAK, never echoing it", () => {
  for (
    const env of ["short-secret-value", "y".repeat(31), `${"z".repeat(32)} space`, "ü".repeat(40)]
  ) {
    assert.throws(() => adminToken(env), (e: unknown) => {
      assert.ok(codeIs("ADMIN_TOKEN_WEAK")(e), String(e));
      assert.ok(!(e as Error).message.includes(env.slice(0, 8)), "the message quotes the token");
      return true;
    });
  }
});
