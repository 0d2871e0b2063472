import assert from "node:assert/strict";
import { canonicalPath, pathUnder } from "./paths.ts";

Deno.test("canonicalPath() folds case, decodes, removes dot segments and empty segments", () => {
  assert.equal(canonicalPath("/Admin/%2e%2e/admin//x"), "/admin/x");
  assert.equal(canonicalPath("/a/./b/../c/"), "/a/c");
  assert.equal(canonicalPath("/%252e%252e/admin"), "/admin");
  assert.equal(canonicalPath("/admin?x=1#y"), "/admin");
  assert.equal(canonicalPath("/bad%zzescape"), "/bad%zzescape");
});

Deno.test("pathUnder() denies eleven spellings of a denied path", () => {
  const spellings = [
    "/admin",
    "/admin/",
    "/ADMIN/users",
    "/%61dmin",
    "/%2561dmin",
    "//admin",
    "/./admin",
    "/x/../admin",
    "/Admin/%2e%2e/admin//x",
    "/admin;jsessionid=1",
    "\\admin\\panel",
  ];
  assert.equal(spellings.length, 11);
  for (const s of spellings) assert.ok(pathUnder(s, "/admin"), s);
});

Deno.test("pathUnder() leaves nearby paths alone", () => {
  for (const s of ["/administrator", "/admins", "/public/admin-guide", "/adm", "/", "/x/admin"]) {
    assert.equal(pathUnder(s, "/admin"), false, s);
  }
});
