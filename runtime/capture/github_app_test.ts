import assert from "node:assert/strict";
import { parsePolicy } from "../policy/policy_file.ts";
import { githubApiBase, githubApp } from "./github_app.ts";

function template(extra: string) {
  return parsePolicy(`capture:
  github_app:
${extra}    manifest:
      name: a
      url: https://a.test
      hook_attributes: { url: https://a.test/h }
`).capture!.github_app!;
}

Deno.test("githubApiBase() is api.github.com for github.com, /api/v3 on an Enterprise Server, or the template's", () => {
  assert.equal(githubApiBase(template("")), "https://api.github.com");
  assert.equal(
    githubApiBase(template("    base_url: https://ghe.example.com\n")),
    "https://ghe.example.com/api/v3",
  );
  assert.equal(
    githubApiBase(
      template("    base_url: https://ghe.test\n    api_url: https://api.ghe.test/v3/\n"),
    ),
    "https://api.ghe.test/v3",
  );
});

Deno.test("githubApp names the vendor's origin for the grants and both origins for the hold", () => {
  const t = template("");
  assert.equal(githubApp.origin(t), "https://github.com");
  assert.deepEqual(githubApp.reach(t), ["https://github.com", "https://api.github.com"]);
  const ghe = template("    base_url: https://ghe.example.com\n");
  assert.deepEqual(githubApp.reach(ghe), ["https://ghe.example.com"]);
  assert.deepEqual(githubApp.outputs, ["pem", "client_secret", "webhook_secret"]);
});
