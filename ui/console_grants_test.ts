import assert from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { rawKeySource, Vault } from "../vault/mod.ts";
import { ApprovalBoard, QuestionBoard } from "../runtime/approvals/mod.ts";
import { MemoryDecisionStore } from "../runtime/store/memory_decision_store.ts";
import { type GrantAuditEvent, Grants } from "../runtime/grants/mod.ts";
import { SqliteGrantStore } from "../runtime/store/sqlite_grant_store.ts";
import { openDatabase } from "../runtime/store/database.ts";
import { createConsoleApp } from "./console_app.ts";
import type { GrantView } from "./ports.ts";

const TOKEN = "admin-token-0123456789-abcdefghijklmnop";
const HOST = "127.0.0.1:8080";
const HOSTILE = "<img src=x onerror=alert(1)>";
const ESCAPED = "&lt;img src=x onerror=alert(1)&gt;";
const SHOP = "http://127.0.0.1:8081";

interface Harness extends AsyncDisposable {
  app: ReturnType<typeof createConsoleApp>;
  store: Grants;
  rows: GrantAuditEvent[];
  db: DatabaseSync;
}

/** The console over real `Grants` (the runtime's own port) and a vault of one secret. */
async function harness(): Promise<Harness> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-console-grants-" });
  const db = openDatabase(join(dir, "omotai.db"));
  const key = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  const vault = await Vault.open(db, rawKeySource(key));
  await vault.add("shop.password", "password", "hunter2-value");
  vault[Symbol.dispose]();
  const rows: GrantAuditEvent[] = [];
  const store = new Grants(new SqliteGrantStore(db), {
    audit: { append: (e) => rows.push(e) },
    secrets: { has: (id) => Vault.has(db, id) },
  });
  const approvals = new ApprovalBoard(new MemoryDecisionStore("approval"), {
    appendSoon: () => Promise.resolve(),
  });
  const questions = new QuestionBoard(new MemoryDecisionStore("question"), {
    appendSoon: () => Promise.resolve(),
  });
  const empty = () => [];
  const app = createConsoleApp({
    adminToken: TOKEN,
    allowedHosts: [HOST],
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
    grants: store,
    audit: { rows: empty, verify: () => ({ ok: true, rows: 0 }), export: empty },
    policies: { modules: empty },
    log: () => {},
  });
  return {
    app,
    store,
    rows,
    db,
    async [Symbol.asyncDispose]() {
      await approvals.close();
      await questions.close();
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

interface Send {
  method?: string;
  cookie?: string;
  bearer?: string;
  csrf?: string;
  form?: Record<string, string>;
  json?: unknown;
}

async function send(h: Harness, path: string, s: Send = {}): Promise<Response> {
  const headers: Record<string, string> = { host: HOST };
  if (s.cookie) headers.cookie = s.cookie;
  if (s.bearer) headers.authorization = `Bearer ${s.bearer}`;
  if (s.csrf) headers["x-csrf-token"] = s.csrf;
  let body: string | undefined;
  if (s.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(s.form).toString();
  } else if (s.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(s.json);
  }
  return await h.app.request(path, {
    method: s.method ?? (body !== undefined ? "POST" : "GET"),
    headers,
    body,
  });
}

async function login(h: Harness): Promise<{ cookie: string; csrf: string }> {
  const res = await send(h, "/login", { form: { token: TOKEN } });
  assert.equal(res.status, 303);
  const cookie = res.headers.get("set-cookie")!.split(";")[0];
  const page = await (await send(h, "/grants", { cookie })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf);
  return { cookie, csrf };
}

const GRANT = {
  secret_id: "shop.password",
  agent: "ci-bot",
  purpose: "log in to the shop",
  mode: "once",
  expires: "2h",
  uses: [{ kind: "fill", allowed_origins: [SHOP] }],
};

Deno.test("createConsoleApp() grants API: add pending, approve, revoke; 404, 409 and refused input", async () => {
  await using h = await harness();
  const added = await send(h, "/api/grants", { bearer: TOKEN, json: GRANT });
  assert.equal(added.status, 201);
  const grant: GrantView = await added.json();
  assert.match(grant.id, /^g_[a-z2-7]{16}$/);
  assert.equal(grant.state, "pending");
  assert.equal(grant.created_by, "api");
  assert.deepEqual(grant.uses, [{ kind: "fill", allowed_origins: [SHOP] }]);

  const list = await (await send(h, "/api/grants", { bearer: TOKEN })).json();
  assert.deepEqual(list.map((g: GrantView) => [g.id, g.state]), [[grant.id, "pending"]]);

  const approve = await send(h, `/api/grants/${grant.id}/approve`, {
    bearer: TOKEN,
    method: "POST",
  });
  assert.equal(approve.status, 200);
  assert.deepEqual(await approve.json(), { id: grant.id, state: "active" });
  assert.equal((await h.store.get(grant.id))!.approved_by, "api");
  const twice = await send(h, `/api/grants/${grant.id}/approve`, { bearer: TOKEN, method: "POST" });
  assert.equal(twice.status, 409);
  assert.equal((await twice.json()).error, "NOT_PENDING");

  const revoke = await send(h, `/api/grants/${grant.id}/revoke`, { bearer: TOKEN, method: "POST" });
  assert.equal(revoke.status, 200);
  assert.deepEqual(await revoke.json(), { id: grant.id, state: "revoked" });
  const again = await send(h, `/api/grants/${grant.id}`, { bearer: TOKEN, method: "DELETE" });
  assert.equal(again.status, 409);
  assert.equal((await again.json()).error, "ALREADY_REVOKED");
  for (
    const [path, method] of [["/api/grants/g_aaaaaaaaaaaaaaaa/approve", "POST"], [
      "/api/grants/nope",
      "DELETE",
    ]]
  ) {
    const res = await send(h, path, { bearer: TOKEN, method });
    assert.equal(res.status, 404, path);
    assert.equal((await res.json()).error, "NOT_FOUND");
  }

  // Approved at once, through DELETE revoked.
  const now = await send(h, "/api/grants", { bearer: TOKEN, json: { ...GRANT, approve: true } });
  assert.equal(now.status, 201);
  const active: GrantView = await now.json();
  assert.equal(active.state, "active");
  const del = await send(h, `/api/grants/${active.id}`, { bearer: TOKEN, method: "DELETE" });
  assert.equal(del.status, 200);
  assert.equal((await h.store.get(active.id))!.state, "revoked");

  const refused: [unknown, number, string][] = [
    [{ ...GRANT, secret_id: "nope" }, 400, "SECRET_NOT_FOUND"],
    [
      { ...GRANT, uses: [{ kind: "fill", allowed_origins: [`${SHOP}/login`] }] },
      400,
      "GRANT_INVALID",
    ],
    [{ ...GRANT, expires: "400d" }, 400, "GRANT_INVALID"],
    [{ ...GRANT, agent: "Not An Agent" }, 400, "GRANT_INVALID"],
    [{ ...GRANT, mode: "forever" }, 400, "BAD_REQUEST"],
    [{ ...GRANT, uses: [] }, 400, "BAD_REQUEST"],
    [{ ...GRANT, approve: "yes" }, 400, "BAD_REQUEST"],
    [{ ...GRANT, extra: 1 }, 400, "BAD_REQUEST"],
  ];
  for (const [json, status, error] of refused) {
    const res = await send(h, "/api/grants", { bearer: TOKEN, json });
    assert.equal(res.status, status, JSON.stringify(json));
    assert.equal((await res.json()).error, error, JSON.stringify(json));
  }
  assert.equal((await h.store.list()).length, 2, "no refused grant was kept");
  assert.deepEqual(h.rows.map((r) => [r.kind, r.module, r.rule]), [
    ["grant_add", "api", grant.id],
    ["grant_approve", "api", grant.id],
    ["grant_revoke", "api", grant.id],
    ["grant_add", "api", active.id],
    ["grant_approve", "api", active.id],
    ["grant_revoke", "api", active.id],
  ]);
});

Deno.test("createConsoleApp() grants need the admin token, and CSRF on every cookie POST", async () => {
  await using h = await harness();
  const api = await send(h, "/api/grants");
  assert.equal(api.status, 401);
  await api.body?.cancel();
  const agentKey = await send(h, "/api/grants", { bearer: "omk_not-the-admin-token", json: GRANT });
  assert.equal(agentKey.status, 401);
  await agentKey.body?.cancel();
  const page = await send(h, "/grants");
  assert.equal(page.status, 303);
  assert.equal(page.headers.get("location"), "/login");

  const { cookie, csrf } = await login(h);
  const form = {
    secret_id: "shop.password",
    agent: "ci-bot",
    purpose: "log in",
    mode: "session",
    expires: "1d",
    fill: `${SHOP}, https://shop.test`,
    capture: "",
  };
  const noCsrf = await send(h, "/grants", { cookie, form });
  assert.equal(noCsrf.status, 403);
  await noCsrf.body?.cancel();
  const noCsrfJson = await send(h, "/api/grants", { cookie, json: GRANT });
  assert.equal(noCsrfJson.status, 403);
  await noCsrfJson.body?.cancel();
  assert.equal((await h.store.list()).length, 0);

  const made = await send(h, "/grants", { cookie, form: { ...form, csrf } });
  assert.equal(made.status, 303);
  assert.equal(made.headers.get("location"), "/grants");
  const [g] = await h.store.list();
  assert.equal(g.state, "pending");
  assert.equal(g.created_by, "console");
  assert.equal(g.mode, "session");
  assert.deepEqual(g.uses, [{ kind: "fill", allowed_origins: [SHOP, "https://shop.test"] }]);

  const shown = await (await send(h, "/grants", { cookie })).text();
  assert.match(shown, new RegExp(`<td class="mono">${g.id}</td>`));
  assert.match(shown, new RegExp(`action="/grants/${g.id}/approve"`));
  assert.match(shown, /<a href="\/grants" class="active">Grants<\/a>/);

  const forged = await send(h, `/grants/${g.id}/approve`, {
    cookie,
    form: { csrf: "x".repeat(43) },
  });
  assert.equal(forged.status, 403);
  await forged.body?.cancel();
  assert.equal((await h.store.get(g.id))!.state, "pending");
  const approved = await send(h, `/grants/${g.id}/approve`, { cookie, form: { csrf } });
  assert.equal(approved.status, 303);
  assert.equal(approved.headers.get("location"), "/grants");
  assert.equal((await h.store.get(g.id))!.approved_by, "console");
  const late = await send(h, `/grants/${g.id}/approve`, { cookie, form: { csrf } });
  assert.equal(late.headers.get("location"), "/grants?notice=grant_not_pending");
  const noticed = await (await send(h, "/grants?notice=grant_not_pending", { cookie })).text();
  assert.match(noticed, /That grant was no longer pending/);
  const revoked = await send(h, `/grants/${g.id}/revoke`, { cookie, form: { csrf } });
  assert.equal(revoked.headers.get("location"), "/grants");
  assert.equal((await h.store.get(g.id))!.revoked_by, "console");
  const twice = await send(h, `/grants/${g.id}/revoke`, { cookie, form: { csrf } });
  assert.equal(twice.headers.get("location"), "/grants?notice=grant_already_revoked");

  // Approved at once from the form; neither origin field filled is refused.
  const now = await send(h, "/grants", { cookie, form: { ...form, approve: "on", csrf } });
  assert.equal(now.status, 303);
  assert.equal((await h.store.list())[0].state, "active");
  const none = await send(h, "/grants", { cookie, form: { ...form, fill: " , ", csrf } });
  assert.equal(none.status, 400);
  assert.match(await none.text(), /invalid or missing: uses/);
});

Deno.test("createConsoleApp() the grants page escapes a hostile purpose and a refused origin", async () => {
  await using h = await harness();
  const { cookie, csrf } = await login(h);
  await h.store.add({ ...GRANT, purpose: `${HOSTILE}<script>alert(2)</script>` }, { by: "cli" });
  const text = await (await send(h, "/grants", { cookie })).text();
  assert.equal(text.includes(HOSTILE), false, "the raw <img> is rendered");
  assert.equal(text.includes("<script>alert(2)"), false, "the raw <script> is rendered");
  assert.ok(text.includes(ESCAPED));
  assert.equal(text.match(/<script/g)?.length, 1, "only the console's own script");
  // A port's message quoting the operator's input is escaped on the error page too.
  const bad = await send(h, "/grants", {
    cookie,
    form: {
      secret_id: "shop.password",
      agent: "ci-bot",
      purpose: "p",
      mode: "once",
      fill: `https://a.test/${HOSTILE}`,
      csrf,
    },
  });
  assert.equal(bad.status, 400);
  const badText = await bad.text();
  assert.match(badText, /is not an http\(s\) origin/);
  assert.equal(badText.includes(HOSTILE), false);
  assert.ok(badText.includes(ESCAPED));
});
