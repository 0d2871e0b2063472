import assert from "node:assert/strict";
import { omotaiFlags } from "./helpers/harness.ts";

Deno.test("omotai start --console in stdio mode serves the console alone, behind the admin token", async () => {
  const dataDir = `runs/test-console-${crypto.randomUUID().slice(0, 8)}`;
  const token = "stdio-console-admin-token-0123456789abcdef";
  const permissions = await omotaiFlags();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...permissions,
      "runtime/main.ts",
      "start",
      "--console",
      "--console-port",
      "0",
      // No MCP client browses here: a warm browser would be launched only to be thrown away.
      "--warm-browsers",
      "0",
      "--data-dir",
      dataDir,
    ],
    env: { OMOTAI_ADMIN_TOKEN: token },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let err = "";
  try {
    while (!/console: (\S+)/.test(err)) {
      const { value, done } = await reader.read();
      assert.ok(!done, err);
      err += value;
    }
    const url = err.match(/console: (\S+)/)![1];
    assert.doesNotMatch(err, new RegExp(token), "a token from the environment is never printed");
    const login = await fetch(`${url}login`);
    assert.equal(login.status, 200);
    assert.match(await login.text(), /Admin token/);
    const anon = await fetch(`${url}api/approvals`);
    assert.equal(anon.status, 401);
    await anon.body?.cancel();
    const admin = await fetch(`${url}api/approvals`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal(admin.status, 200);
    assert.deepEqual(await admin.json(), []);
    // The console port is not an MCP door.
    const mcp = await fetch(`${url}mcp`, {
      method: "POST",
      body: "{}",
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.ok(mcp.status === 401 || mcp.status === 404, String(mcp.status));
    assert.equal(mcp.headers.get("mcp-session-id"), null);
    await mcp.body?.cancel();
  } finally {
    await child.stdin.close();
    await reader.cancel().catch(() => {});
    await child.stdout.cancel().catch(() => {});
    const status = await child.status;
    assert.equal(status.code, 0, "stdin closing ends the runtime cleanly");
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});
