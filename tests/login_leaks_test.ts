/**
 * The leak paths of a login beyond the MCP stream: a stdio runtime's stderr, and every page
 * and API answer of the operator console, searched for every encoded form of the planted
 * values after a login on a page that echoes the password.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { rawKeySource, Vault } from "../vault/mod.ts";
import { Grants } from "../runtime/grants/mod.ts";
import { SqliteGrantStore } from "../runtime/store/sqlite_grant_store.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { secretForms } from "../runtime/redact/mod.ts";
import { keyedTransport, omotaiFlags, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { serveLoginSite } from "./fixtures/login_site.ts";

const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const USER = "grace.hopper@example.test";
const PASSWORD = "Echo-Planted-Secret-91c4e2";

async function prepare(site: ReturnType<typeof serveLoginSite>, agent: string) {
  // Under runs/: the omotai task may write there only.
  const dataDir = `runs/test-leaks-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(dataDir, { recursive: true });
  const db = openDatabase(databasePath(dataDir));
  {
    using vault = await Vault.open(db, rawKeySource(KEY));
    await vault.add("leak-user", "username", USER);
    await vault.add("leak-pass", "password", PASSWORD);
  }
  const grants = new Grants(new SqliteGrantStore(db), {
    audit: { append() {} },
    secrets: { has: (id) => Vault.has(db, id) },
  });
  for (const secret_id of ["leak-user", "leak-pass"]) {
    await grants.add({
      secret_id,
      agent,
      purpose: "leak test",
      mode: "standing",
      expires: "1h",
      uses: [{ kind: "fill", allowed_origins: [site.origin] }],
    }, { approve: true });
  }
  db.close();
  const policy = `${dataDir}/policy.yaml`;
  await Deno.writeTextFile(
    policy,
    `allowed_origins: [${site.origin}]\ntaint_after_login: none\n`,
  );
  return { dataDir, policy };
}

function assertClean(texts: string[], where: string) {
  const forms = [...secretForms(PASSWORD), ...secretForms(USER).filter((f) => f.length > 6)];
  for (const form of forms) {
    for (const t of texts) assert.ok(!t.includes(form), `a form of a secret is in ${where}`);
  }
}

Deno.test("a stdio runtime's stderr and MCP stream hold no form of a login's values", async () => {
  await using site = serveLoginSite({ user: USER, password: PASSWORD });
  const { dataDir, policy } = await prepare(site, "stdio");
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      "run",
      ...await omotaiFlags(),
      "runtime/main.ts",
      "start",
      "--data-dir",
      dataDir,
      "--policy",
      policy,
    ],
    env: { ...Deno.env.toObject(), OMOTAI_VAULT_KEY: KEY },
    stderr: "pipe",
  });
  let stderr = "";
  const pump = (async () => {
    const stream = transport.stderr as unknown as AsyncIterable<Uint8Array> | null;
    if (!stream) return;
    for await (const chunk of stream) stderr += new TextDecoder().decode(chunk);
  })();
  const client = new Client({ name: "leak-test", version: "0" });
  await client.connect(transport);
  const c = new TestClient(client);
  await c.call("browser_navigate", { url: `${site.origin}/login-leak?mode=plain&hold=1` });
  const login = await c.call("browser_login");
  // The echo page never submits: the runtime typed, pressed Enter and saw the form again.
  assert.match(login.text, /login: LOGIN_REJECTED/);
  const snap = await c.call("browser_snapshot");
  assert.match(snap.text, /\[redacted\]/, "the echo is on the page, redacted");
  await c.call("browser_console_messages");
  await c.call("browser_network_requests");
  await c.call("browser_tabs", { action: "list" });
  await c[Symbol.asyncDispose]();
  await pump.catch(() => {});
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  assert.ok(stderr.length > 0, "the runtime wrote to stderr");
  assertClean(c.outputs, "the MCP stream");
  assertClean([stderr], "stderr");
});

Deno.test("no console page or API answer holds a form of a login's values", async () => {
  await using site = serveLoginSite({ user: USER, password: PASSWORD });
  const { dataDir, policy } = await prepare(site, "carol");
  const mirror = `${dataDir}/audit.jsonl`;
  const runtime = await startTestRuntime(dataDir, await Deno.readTextFile(policy), {
    vaultKey: { key: KEY },
    audit: mirror,
  });
  await using _rt = runtime;
  const { key } = await runtime.agents.add("carol");
  const client = new Client({ name: "leak-test", version: "0" });
  await client.connect(keyedTransport(runtime.url!, key));
  await using c = new TestClient(client);
  await c.call("browser_navigate", { url: `${site.origin}/login-leak?mode=reversed&hold=1` });
  await c.call("browser_login");
  await c.call("browser_snapshot");
  const headers = { Authorization: `Bearer ${runtime.adminToken}` };
  const answers: string[] = [];
  for (
    const path of [
      "/api/audit",
      "/api/audit/export",
      "/api/sessions",
      "/api/grants",
      "/api/questions",
      "/api/approvals",
      "/api/agents",
      "/api/domains",
      "/",
      "/audit",
      "/sessions",
      "/grants",
      "/questions",
      "/agents",
    ]
  ) {
    const r = await fetch(new URL(path, runtime.url), { headers });
    answers.push(`${path} ${r.status} ${await r.text()}`);
  }
  assert.ok(answers.some((a) => a.startsWith("/api/audit 200")), answers[0].slice(0, 200));
  assert.ok(answers.some((a) => a.startsWith("/api/grants 200")));
  assertClean(answers, "a console answer");
  assertClean(c.outputs, "the MCP stream");
  const jsonl = await Deno.readTextFile(mirror);
  assert.match(jsonl, /grant_redeem/, "the mirror holds the login's rows");
  assertClean([jsonl], "the JSONL audit mirror");
  // The database and its write-ahead log, as bytes.
  for (const file of [databasePath(dataDir), `${databasePath(dataDir)}-wal`]) {
    const bytes = await Deno.readFile(file).catch(() => new Uint8Array());
    assertClean([new TextDecoder("latin1").decode(bytes)], file);
  }
});
