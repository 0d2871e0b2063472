import assert from "node:assert/strict";
import { normalizeOrigin } from "./origin.ts";

Deno.test("normalizeOrigin() lowercases, drops default ports and paths", () => {
  assert.equal(normalizeOrigin("HTTP://Portal.TEST:80/x?y#z"), "http://portal.test");
  assert.equal(normalizeOrigin("https://a.test:443"), "https://a.test");
  assert.equal(normalizeOrigin("http://127.0.0.1:8081/"), "http://127.0.0.1:8081");
  assert.equal(normalizeOrigin("http://user:pw@a.test/"), "http://a.test");
});

Deno.test("normalizeOrigin() refuses non-http schemes and junk", () => {
  for (
    const bad of [
      "javascript:alert(1)",
      "file:///etc/passwd",
      "data:text/html,x",
      "chrome://settings",
      "nope",
    ]
  ) {
    assert.equal(normalizeOrigin(bad), undefined, bad);
  }
});
