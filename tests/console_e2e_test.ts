/**
 * The operator console end to end: an agent's write waits for a human, who approves one
 * and denies another in a separate Chromium, while the agent's MCP call waits (with
 * progress). Set OMOTAI_CONSOLE_SCREENSHOT=docs/console.png to keep a picture of the page.
 */
import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { agentTransport, eventually, refOf, startTestRuntime } from "./helpers/harness.ts";
import { serveFixtureSite } from "./fixtures/site.ts";
import { operatorBrowser } from "./helpers/operator_browser.ts";

Deno.test("console: a human approves one write and denies another while the agent waits", async () => {
  await using site = serveFixtureSite();
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-console-e2e-" });
  await using runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${site.origin}]\nread_only: true\nconfirm_writes: true\nconfirm_timeout_seconds: 60\n`,
  );
  const client = new Client({ name: "agent", version: "0" });
  await client.connect(await agentTransport(runtime, "http", "clerk"));
  const call = async (name: string, args: Record<string, unknown>, onprogress?: () => void) => {
    const r = await client.callTool({ name, arguments: args }, undefined, {
      onprogress,
      timeout: 90_000,
    });
    const content = (r.content ?? []) as { text?: string }[];
    return { text: content.map((c) => c.text ?? "").join("\n"), isError: r.isError === true };
  };

  const operator = await operatorBrowser(`${dataDir}/operator`);
  const { evaluate, evaluateAndLoad } = operator;
  try {
    await operator.login(runtime.url!, runtime.adminToken);
    assert.equal(await evaluate("location.pathname"), "/");

    // The agent's write: read_only + confirm_writes makes it wait for the operator.
    const home = await call("browser_navigate", { url: `${site.origin}/` });
    let progress = 0;
    const first = call(
      "browser_click",
      { ref: refOf(home.text, /button "Sign in"/) },
      () => progress++,
    );
    assert.ok(
      await eventually(
        async () =>
          Number(await evaluate("document.querySelectorAll('[data-pending]').length")) === 1,
        10_000,
      ),
      "the approval shows up on the console without a reload",
    );
    const shown = String(await evaluate("document.body.innerText"));
    assert.match(shown, /clerk/);
    assert.match(shown, /\/login/);
    assert.match(shown, /alice/);
    // The held request itself: every entry it carries, the page's own password field too (a
    // masked entry is where a page would hide what it really sends); stored secrets are the
    // ones redacted (tests/approve_request_test.ts).
    assert.match(shown, /planted-prefill/);
    const shot = Deno.env.get("OMOTAI_CONSOLE_SCREENSHOT");
    if (shot) {
      const { data } = await operator.page.send("Page.captureScreenshot", { format: "png" });
      await Deno.writeFile(shot, Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
    }
    // The waiting client hears progress (every PROGRESS_EVERY_MS) while the write is held.
    assert.ok(await eventually(() => progress >= 1), "no progress while held");
    assert.equal(site.posts.get("/login"), undefined, "nothing is sent before the approval");
    await evaluateAndLoad(`document.querySelector("button.approve").click()`);
    const approved = await first;
    assert.equal(approved.isError, false, approved.text);
    assert.match(approved.text, /clicked e\d+/);
    assert.ok(progress >= 1, "the waiting client got progress notifications");
    assert.equal(site.posts.get("/login")?.length, 1, "the approved POST went out once");

    // A second write: the operator denies it.
    const again = await call("browser_navigate", { url: `${site.origin}/` });
    const second = call("browser_click", { ref: refOf(again.text, /button "Sign in"/) });
    assert.ok(
      await eventually(async () => {
        await evaluate("location.reload()");
        await new Promise((r) => setTimeout(r, 200));
        return Number(await evaluate("document.querySelectorAll('[data-pending]').length")) === 1;
      }, 10_000),
    );
    await evaluateAndLoad(
      `[...document.querySelectorAll("button")].find((b) => b.textContent === "Deny").click()`,
    );
    const denied = await second;
    assert.match(denied.text, /^denied: CONFIRM_DENIED/);
    assert.equal(site.posts.get("/login")?.length, 1, "the denied POST never left");

    const rows = (await runtime.audit.rows()).filter((r) => r.kind === "approval");
    assert.deepEqual(rows.map((r) => r.reason), ["APPROVED", "CONFIRM_DENIED"]);
    for (const r of rows) assert.ok(!JSON.stringify(r).includes("/login"), "no path in the audit");
  } finally {
    await client.close().catch(() => {});
    await operator[Symbol.asyncDispose]();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});
