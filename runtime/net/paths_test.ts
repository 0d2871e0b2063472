import assert from "node:assert/strict";
import { canonicalPath } from "./paths.ts";

/** Whether the canonical form of `path` is `/admin` or a path below it, on whole segments. */
const underAdmin = (path: string) => /^\/admin(?:\/|$)/.test(canonicalPath(path));

Deno.test("canonicalPath() folds case, decodes, removes dot segments and empty segments", () => {
  assert.equal(canonicalPath("/Admin/%2e%2e/admin//x"), "/admin/x");
  assert.equal(canonicalPath("/a/./b/../c/"), "/a/c");
  assert.equal(canonicalPath("/%252e%252e/admin"), "/admin");
  assert.equal(canonicalPath("/admin?x=1#y"), "/admin");
  assert.equal(canonicalPath("/bad%zzescape"), "/bad%zzescape");
});

Deno.test("canonicalPath() puts eleven spellings of a denied path at or under it", () => {
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
  for (const s of spellings) assert.ok(underAdmin(s), s);
});

Deno.test("canonicalPath() leaves nearby paths apart from a denied one", () => {
  for (const s of ["/administrator", "/admins", "/public/admin-guide", "/adm", "/", "/x/admin"]) {
    assert.equal(underAdmin(s), false, s);
  }
});
