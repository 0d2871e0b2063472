/** A cancelled browser_wait_for stops waiting at once and frees the session for the next call. */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { agentTransport, startTestRuntime } from "./helpers/harness.ts";
import { serveFixtureSite } from "./fixtures/site.ts";
import { tempDir } from "./helpers/temp_dir.ts";

Deno.test("browser_wait_for cancelled by the client frees the session at once", async () => {
  await using site = serveFixtureSite();
  await using dataDir = await tempDir("omotai-wait-cancel-");
  await using runtime = await startTestRuntime(dataDir.path, `allowed_origins: [${site.origin}]\n`);
  const client = new Client({ name: "cancel", version: "0" });
  await client.connect(await agentTransport(runtime));
  try {
    await client.callTool({ name: "browser_navigate", arguments: { url: `${site.origin}/` } });
    for (const args of [{ time: 30 }, { text: "never on this page" }]) {
      const controller = new AbortController();
      const waiting = client.callTool({ name: "browser_wait_for", arguments: args }, undefined, {
        signal: controller.signal,
        timeout: 60_000,
      }).catch((e: Error) => e);
      await new Promise((r) => setTimeout(r, 700));
      controller.abort();
      assert.ok((await waiting) instanceof Error, "the cancelled call rejects");
      const t0 = performance.now();
      const next = await client.callTool({ name: "browser_snapshot", arguments: {} }, undefined, {
        timeout: 10_000,
      });
      const ms = performance.now() - t0;
      assert.notEqual(next.isError, true);
      // The wait held the session for up to 30 s before: now the next call is not queued.
      assert.ok(ms < 5_000, `${JSON.stringify(args)}: the next call waited ${Math.round(ms)} ms`);
    }
  } finally {
    await client.close();
  }
});
