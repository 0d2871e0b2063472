import assert from "node:assert/strict";
import { displayUrl } from "./display_url.ts";

Deno.test("displayUrl() shows origin+path and hides queries", () => {
  assert.equal(displayUrl("http://a.test/x?q=1#f", "http://a.test/"), "/x");
  assert.equal(displayUrl("https://b.test/x?q=1", "http://a.test/"), "https://b.test/x");
  assert.equal(displayUrl("javascript:alert(1)", "http://a.test/"), "javascript:");
  assert.equal(displayUrl("mailto:a@b.c", undefined), "mailto:");
});

Deno.test("displayUrl() shows a tab that committed nothing (no URL) as about:blank", () => {
  assert.equal(displayUrl("", undefined), "about:blank");
  assert.equal(displayUrl("", "http://a.test/"), "about:blank");
  assert.equal(displayUrl("not a url", undefined), "(invalid url)");
});
