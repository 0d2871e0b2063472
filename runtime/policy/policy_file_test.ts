import assert from "node:assert/strict";
import { PolicyFileError } from "../errors.ts";
import { parsePolicy } from "./policy_file.ts";

Deno.test("parsePolicy() normalizes allowed_origins", () => {
  const p = parsePolicy("allowed_origins:\n  - HTTP://Portal.TEST:80\n  - https://b.test/\n");
  assert.deepEqual(p.allowed_origins, ["http://portal.test", "https://b.test"]);
});

Deno.test("parsePolicy() rejects unknown keys naming key and line", () => {
  assert.throws(
    () => parsePolicy("allowed_origins: []\nallowed_orgins: []\n", "p.yaml"),
    (e: unknown) =>
      e instanceof PolicyFileError && e.code === "POLICY_INVALID" &&
      /p\.yaml:2: unknown key "allowed_orgins"/.test(e.message),
  );
});

Deno.test("parsePolicy() rejects bad types naming key and line", () => {
  assert.throws(
    () => parsePolicy("# c\nallowed_origins: yes\n", "p.yaml"),
    /p\.yaml:2: "allowed_origins"/,
  );
  assert.throws(
    () => parsePolicy("allowed_origins:\n  - https://ok.test\n  - https://x.test/path\n", "p.yaml"),
    /p\.yaml:3: "allowed_origins.1": "https:\/\/x.test\/path" is not an http\(s\) origin/,
  );
});

Deno.test("parsePolicy() rejects broken YAML and duplicate keys with a line", () => {
  assert.throws(() => parsePolicy("allowed_origins: [\n", "p.yaml"), /p\.yaml:\d+: invalid YAML/);
  assert.throws(
    () => parsePolicy("allowed_origins: []\nallowed_origins: []\n", "p.yaml"),
    /p\.yaml:2: invalid YAML/,
  );
});

Deno.test("parsePolicy() accepts an empty file as the empty policy", () => {
  assert.deepEqual(parsePolicy(""), { allowed_origins: [] });
});
