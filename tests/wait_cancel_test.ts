/** A cancelled browser_wait_for stops waiting at once and frees the session for the next call. */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { agentTransport, CALL_TIMEOUT_MS, startTestRuntime } from "./helpers/harness.ts";
import { MAX_WAIT_SECONDS } from "../runtime/tools/wait.ts";
import { serveFixtureSite } from "./fixtures/site.ts";
import { tempDir } from "./helpers/temp_dir.ts";

Deno.test("browser_wait_for cancelled by the client frees the session at once", async () => {
  await using site = serveFixtureSite();
  await using dataDir = await tempDir("omotai-wait-cancel-");
  await using runtime = await startTestRuntime(dataDir.path, `allowed_origins: [${site.origin}]\n`);
  const client = new Client({ name: "cancel", version: "0" });
  await client.connect(await agentTransport(runtime));
  try {
    const url = `${site.origin}/`;
    await client.callTool({ name: "browser_navigate", arguments: { url } }, undefined, {
      timeout: CALL_TIMEOUT_MS,
    });
    for (const args of [{ time: MAX_WAIT_SECONDS }, { text: "never on this page" }]) {
      const controller = new AbortController();
      const started = performance.now();
      const waiting = client.callTool({ name: "browser_wait_for", arguments: args }, undefined, {
        signal: controller.signal,
        timeout: CALL_TIMEOUT_MS,
      }).catch((e: Error) => e);
      await new Promise((r) => setTimeout(r, 700));
      controller.abort();
      assert.ok((await waiting) instanceof Error, "the cancelled call rejects");
      const next = await client.callTool({ name: "browser_snapshot", arguments: {} }, undefined, {
        timeout: CALL_TIMEOUT_MS,
      });
      const ms = performance.now() - started;
      assert.notEqual(next.isError, true);
      // The outcome, not a speed: both waits last MAX_WAIT_SECONDS unless cancelled, and the
      // session runs one call at a time, so a next call answered before the wait could have
      // ended was not queued behind it.
      assert.ok(
        ms < MAX_WAIT_SECONDS * 1000,
        `${JSON.stringify(args)}: the next call answered ${Math.round(ms)} ms after the wait began`,
      );
    }
  } finally {
    await client.close();
  }
});
