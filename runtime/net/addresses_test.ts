import assert from "node:assert/strict";
import { isIpLiteral, isPrivateHost } from "./addresses.ts";

Deno.test("isPrivateHost() knows loopback, private, link-local and mapped forms", () => {
  for (
    const h of [
      "127.0.0.1",
      "127.9.9.9",
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "localhost",
      "a.localhost",
      "LOCALHOST.",
      "[::1]",
      "::",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "ff02::1",
    ]
  ) assert.equal(isPrivateHost(h), true, h);
  for (
    const h of [
      "8.8.8.8",
      "172.32.0.1",
      "192.169.0.1",
      "example.com",
      "2001:4860::8888",
      "[2606:4700::1111]",
    ]
  ) assert.equal(isPrivateHost(h), false, h);
});

Deno.test("isIpLiteral() tells literals from names", () => {
  assert.equal(isIpLiteral("127.0.0.1"), true);
  assert.equal(isIpLiteral("[::1]"), true);
  assert.equal(isIpLiteral("example.com"), false);
});
