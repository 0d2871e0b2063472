import assert from "node:assert/strict";
import { browserUserCommand, hasUser } from "./install.ts";

Deno.test("the browser's user is a system user without home or login shell", () => {
  assert.deepEqual(browserUserCommand(), [
    "useradd",
    "--system",
    "--no-create-home",
    "--home-dir",
    "/nonexistent",
    "--shell",
    "/usr/sbin/nologin",
    "omotai-browser",
  ]);
  assert.ok(
    hasUser("root:x:0:0::/root:/bin/sh\nomotai-browser:x:999:995::/:/x\n", "omotai-browser"),
  );
  assert.ok(!hasUser("root:x:0:0::/root:/bin/sh\nomotai-browserx:x:9:9::/:/x\n", "omotai-browser"));
});
