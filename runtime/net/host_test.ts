import assert from "node:assert/strict";
import { bracketHost } from "./host.ts";

Deno.test("bracketHost() brackets IPv6 literals once and leaves names and IPv4 alone", () => {
  assert.equal(bracketHost("::1"), "[::1]");
  assert.equal(bracketHost("[::1]"), "[::1]");
  assert.equal(bracketHost("fe80::1"), "[fe80::1]");
  assert.equal(bracketHost("127.0.0.1"), "127.0.0.1");
  assert.equal(bracketHost("portal.test"), "portal.test");
});
