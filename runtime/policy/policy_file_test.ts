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

Deno.test("parsePolicy() gives safe defaults for an empty file", () => {
  const p = parsePolicy("");
  assert.deepEqual(p.allowed_origins, []);
  assert.equal(p.read_only, true);
  assert.equal(p.confirm_writes, false);
  assert.equal(p.max_actions, 0);
  assert.equal(p.modules, undefined);
});

Deno.test("parsePolicy() canonicalizes denied path prefixes and checks every key", () => {
  const p = parsePolicy(
    "denied_paths:\n  - origin: HTTP://Portal.test:80\n    path_prefix: /Admin/./x/../\n" +
      "read_only: false\nmax_actions: 5\nmodules:\n  - path: bundled:baseline\n",
  );
  assert.deepEqual(p.denied_paths, [{ origin: "http://portal.test", path_prefix: "/admin" }]);
  assert.equal(p.read_only, false);
  assert.throws(() => parsePolicy("read_only: maybe\n", "p.yaml"), /p\.yaml:1: "read_only"/);
  assert.throws(
    () => parsePolicy("denied_paths:\n  - origin: '*'\n    prefix: /x\n", "p.yaml"),
    /p\.yaml:3: unknown key "denied_paths.0.prefix"/,
  );
  assert.throws(() => parsePolicy("trusted_keys: [abc]\n", "p.yaml"), /trusted_keys.0/);
  assert.throws(() => parsePolicy("max_actions: -1\n", "p.yaml"), /max_actions/);
});

Deno.test("parsePolicy() reads screenshots and upload_dir, off and absent by default", () => {
  const empty = parsePolicy("");
  assert.equal(empty.screenshots, false);
  assert.equal(empty.upload_dir, undefined);
  const p = parsePolicy("screenshots: true\nupload_dir: /srv/uploads\n");
  assert.equal(p.screenshots, true);
  assert.equal(p.upload_dir, "/srv/uploads");
});

Deno.test("parsePolicy() refuses a relative upload_dir and a non-boolean screenshots with file and line", () => {
  assert.throws(
    () => parsePolicy("allowed_origins: []\nupload_dir: uploads\n", "p.yaml"),
    (e: unknown) =>
      e instanceof PolicyFileError &&
      /p\.yaml:2: "upload_dir": must be an absolute path/.test(e.message),
  );
  assert.throws(() => parsePolicy("upload_dir: ''\n", "p.yaml"), /p\.yaml:1: "upload_dir"/);
  assert.throws(() => parsePolicy("upload_dir: [/a]\n", "p.yaml"), /p\.yaml:1: "upload_dir"/);
  assert.throws(
    () => parsePolicy("screenshots: sometimes\n", "p.yaml"),
    /p\.yaml:1: "screenshots"/,
  );
  assert.throws(
    () => parsePolicy("screenshot: true\n", "p.yaml"),
    /p\.yaml:1: unknown key "screenshot"/,
  );
});

Deno.test("parsePolicy() reads max_sessions: unset by default, 0 or a count, nothing else", () => {
  assert.equal(parsePolicy("").max_sessions, undefined);
  assert.equal(parsePolicy("max_sessions: 0\n").max_sessions, 0);
  assert.equal(parsePolicy("max_sessions: 5\n").max_sessions, 5);
  for (const bad of ["-1", "1.5", "'2'", "10001"]) {
    assert.throws(
      () => parsePolicy(`allowed_origins: []\nmax_sessions: ${bad}\n`, "p.yaml"),
      /p\.yaml:2: "max_sessions"/,
      bad,
    );
  }
});

Deno.test("parsePolicy() reads limits.browser_memory_mb and refuses what is not a size", () => {
  assert.equal(parsePolicy("limits:\n  browser_memory_mb: 512\n").limits?.browser_memory_mb, 512);
  assert.equal(parsePolicy("").limits, undefined);
  assert.throws(
    () => parsePolicy("limits:\n  browser_memory_mb: 64\n", "p.yaml"),
    (e: Error) =>
      e instanceof PolicyFileError && /p\.yaml:2: "limits\.browser_memory_mb"/.test(e.message),
  );
  assert.throws(
    () => parsePolicy("limits:\n  browser_memory_mb: 1.5\n"),
    PolicyFileError,
  );
  assert.throws(
    () => parsePolicy("limits:\n  browser_memory: 512\n"),
    (e: Error) => /unknown key "limits\.browser_memory"/.test(e.message),
  );
});
