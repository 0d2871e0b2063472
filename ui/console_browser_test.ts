import assert from "node:assert/strict";
import { ApprovalBoard, QuestionBoard } from "../runtime/approvals/mod.ts";
import { MemoryDecisionStore } from "../runtime/store/memory_decision_store.ts";
import { requestView } from "../runtime/net/request_view.ts";
import { baseFacts, FRESH_SESSION } from "../runtime/policy/fact_builders.ts";
import { operatorBrowser } from "../tests/helpers/operator_browser.ts";
import { tempDir } from "../tests/helpers/temp_dir.ts";
import { createConsoleApp } from "./console_app.ts";

const TOKEN = "admin-token-0123456789-abcdefghijklmnop";

/** Polls `check` until it holds or `ms` pass. */
async function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

Deno.test("createConsoleApp() in Chromium: login, a live approval row and title, Approve, no CSP violation", async () => {
  const approvals = new ApprovalBoard(new MemoryDecisionStore("approval"), {
    appendSoon: () => Promise.resolve(),
  });
  const questions = new QuestionBoard(new MemoryDecisionStore("question"), {
    appendSoon: () => Promise.resolve(),
  });
  const empty = () => [];
  // The live script counts pending approvals only once its stream said `ready`.
  let liveReady = false;
  // The app needs the port, the server needs the app: requests come only once both exist.
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req, info) => {
      const url = new URL(req.url);
      if (url.pathname === "/api/approvals" && url.search === "?state=pending") liveReady = true;
      return app.fetch(req, info);
    },
  );
  const base = `http://127.0.0.1:${server.addr.port}`;
  const app = createConsoleApp({
    adminToken: TOKEN,
    allowedHosts: [`127.0.0.1:${server.addr.port}`],
    approvals,
    questions,
    sessions: { list: empty, kill: () => Promise.resolve(false) },
    agents: {
      list: () => Promise.resolve([]),
      add: (name) => Promise.resolve({ name, key: "k" }),
      remove: () => Promise.resolve(false),
    },
    domains: {
      list: () => Promise.resolve([]),
      add: (origin) => Promise.resolve(origin),
      remove: () => Promise.resolve(false),
    },
    grants: {
      list: () => Promise.resolve([]),
      add: () => Promise.reject(new Error("no grants here")),
      approve: () => Promise.reject(Object.assign(new Error("none"), { code: "GRANT_NOT_FOUND" })),
      revoke: () => Promise.reject(Object.assign(new Error("none"), { code: "GRANT_NOT_FOUND" })),
    },
    audit: { rows: empty, verify: () => ({ ok: true, rows: 0 }), export: empty },
    policies: { modules: empty },
    heartbeatMs: 1_000,
  });

  // Removed after the operator's browser has shut down (disposed before it).
  await using dir = await tempDir("omotai-console-");
  await using operator = await operatorBrowser(dir.path);
  const { page, evaluate, evaluateAndLoad } = operator;
  try {
    await page.send("Log.enable");
    const problems: string[] = [];
    page.on("Log.entryAdded", ({ entry }) => {
      if (/Content Security Policy|Refused to/i.test(entry.text)) problems.push(entry.text);
    });
    page.on("Runtime.exceptionThrown", (e) => problems.push(e.exceptionDetails.text));
    await page.send("Runtime.enable");

    await operator.login(base, TOKEN);
    assert.equal(await evaluate("location.pathname"), "/", "the login form logs in");
    assert.equal(await evaluate("document.title"), "Approvals — Omotai");
    // The live script is connected once its stream said ready (it then catches up).
    assert.ok(await eventually(() => Promise.resolve(liveReady)), "the live stream is ready");

    const answer = approvals.request({
      session: "s-1",
      agent: "alice",
      tool: "browser_click",
      facts: baseFacts("click", FRESH_SESSION),
      details: {
        origin: "https://bank.test",
        kind: "form",
        request: requestView({
          method: "POST",
          url: "https://bank.test/transfer",
          contentType: "application/x-www-form-urlencoded",
          body: new TextEncoder().encode(
            new URLSearchParams({ amount: "100", payee: "Acme\u202Eevil", memo: "m".repeat(500) })
              .toString(),
          ),
        }, (s) => s),
      },
      timeoutMs: 60_000,
    });
    assert.ok(
      await eventually(async () => await evaluate("document.title") === "(1) Approvals — Omotai"),
      "the title counts the new approval without a reload",
    );
    assert.equal(await evaluate("document.querySelectorAll('[data-pending]').length"), 1);
    const rowText = String(await evaluate(`document.querySelector("[data-pending]").innerText`));
    assert.ok(rowText.includes("Acme\\u{202E}evil"), "the override shows as an escape");
    assert.ok(!rowText.includes("\u202E"), "no raw override on the page");
    assert.match(rowText, /invisible\/bidi characters/);
    assert.match(rowText, /… \(500 characters\)/);
    // The operator unfolds the long memo; a live refresh keeps it unfolded.
    await evaluate(`document.querySelector("details.fold summary").click()`);
    assert.equal(await evaluate(`document.querySelector("details.fold").open`), true);
    assert.equal(
      await evaluate(`document.querySelector("details.fold .whole").textContent`),
      "m".repeat(500),
    );
    const other = approvals.request({
      session: "s-2",
      agent: "bob",
      tool: "browser_click",
      facts: baseFacts("click", FRESH_SESSION),
      details: {
        origin: "https://shop.test",
        kind: "script",
        request: requestView({
          method: "GET",
          url: "https://shop.test/x",
          contentType: null,
          body: new Uint8Array(),
        }, (s) => s),
      },
      timeoutMs: 60_000,
    });
    assert.ok(
      await eventually(async () => await evaluate("document.title") === "(2) Approvals — Omotai"),
    );
    assert.ok(
      await eventually(async () =>
        await evaluate("document.querySelectorAll('[data-pending]').length") === 2
      ),
    );
    assert.equal(
      await evaluate(
        `document.querySelector("[data-pending='${
          (await approvals.list("pending"))[1].id
        }'] details.fold").open`,
      ),
      true,
      "still unfolded after the refresh",
    );
    await approvals.decide((await approvals.list("pending"))[0].id, "deny", "api");
    await other;
    assert.ok(
      await eventually(async () =>
        await evaluate("document.querySelectorAll('[data-pending]').length") === 1
      ),
    );

    await evaluateAndLoad(`document.querySelector("button.approve").click()`);
    assert.deepEqual(await answer, { outcome: "approved" });
    assert.match(String(await evaluate("document.body.innerText")), /approved/);
    assert.deepEqual(problems, []);
  } finally {
    await approvals.close();
    await questions.close();
  }
});
