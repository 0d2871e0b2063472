import assert from "node:assert/strict";
import { ApprovalBoard, QuestionBoard } from "../runtime/approvals/mod.ts";
import { MemoryDecisionStore } from "../runtime/store/memory_decision_store.ts";
import type { AuditRow } from "../runtime/store/audit_row.ts";
import type { ApprovalOutcome } from "../runtime/gate/approver.ts";
import { MemorySink } from "../tests/helpers/memory_sink.ts";
import { formDetails, pending } from "../tests/helpers/pending_approval.ts";
import { consoleRoutePaths, createConsoleApp, isConsolePath, ownedPaths } from "./console_app.ts";
import type {
  AgentsPort,
  AgentView,
  ApprovalsPort,
  AuditFilter,
  AuditPort,
  DomainsPort,
  DomainView,
  GrantsPort,
  GrantView,
  PoliciesPort,
  PolicyModuleView,
  QuestionsPort,
  SessionInfo,
  SessionsPort,
} from "./ports.ts";

const TOKEN = "admin-token-0123456789-abcdefghijklmnop";
const AGENT_KEY = "omk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
const HOST = "127.0.0.1:8080";
const HOSTILE = "<img src=x onerror=alert(1)>";
const HOSTILE_SCRIPT = "<script>alert(2)</script>";
const ESCAPED = "&lt;img src=x onerror=alert(1)&gt;";

/** A live session as the console lists it. */
const SESSION: SessionInfo = {
  id: "s-1",
  agent: "helper",
  origin: null,
  actionsUsed: 0,
  tainted: false,
  isolation: "netns",
  startedAt: "2025-01-01T00:00:00.000Z",
};

class FakeSessions implements SessionsPort {
  sessions: SessionInfo[] = [];
  killed: string[] = [];
  max: number | null | undefined = undefined;
  list(): SessionInfo[] {
    return this.sessions;
  }
  get capacity(): SessionsPort["capacity"] {
    return this.max === undefined ? undefined : () => ({
      open: this.sessions.length,
      max: this.max ?? null,
      agentShare: this.max ? Math.ceil(this.max / 2) : null,
    });
  }
  kill(id: string): Promise<boolean> {
    const found = this.sessions.some((s) => s.id === id);
    if (found) this.killed.push(id);
    this.sessions = this.sessions.filter((s) => s.id !== id);
    return Promise.resolve(found);
  }
}

class FakeAgents implements AgentsPort {
  agents: AgentView[] = [];
  add(name: string, policy?: string): Promise<{ name: string; key: string }> {
    if (this.agents.some((a) => a.name === name)) {
      return Promise.reject(
        Object.assign(new Error(`agent ${name} exists`), { code: "AGENT_EXISTS" }),
      );
    }
    this.agents.push({ name, policy, createdAt: "2025-01-01T00:00:00.000Z" });
    return Promise.resolve({ name, key: `omk_key-of-${name}` });
  }
  remove(name: string): Promise<boolean> {
    const before = this.agents.length;
    this.agents = this.agents.filter((a) => a.name !== name);
    return Promise.resolve(this.agents.length < before);
  }
  list(): Promise<AgentView[]> {
    return Promise.resolve(this.agents);
  }
}

class FakeDomains implements DomainsPort {
  rules: DomainView[] = [];
  add(origin: string, rule: "allow" | "deny"): Promise<string> {
    if (!/^https?:\/\//.test(origin)) {
      return Promise.reject(
        Object.assign(new Error("not an http(s) origin"), { code: "BAD_ORIGIN" }),
      );
    }
    const added_at = "2025-01-01T00:00:00.000Z";
    this.rules = [...this.rules.filter((r) => r.origin !== origin), { origin, rule, added_at }];
    return Promise.resolve(origin);
  }
  remove(origin: string): Promise<boolean> {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.origin !== origin);
    return Promise.resolve(this.rules.length < before);
  }
  list(): Promise<DomainView[]> {
    return Promise.resolve(this.rules);
  }
}

/** Lists what a test puts in; the real `Grants` are in console_grants_test.ts. */
class FakeGrants implements GrantsPort {
  grants: GrantView[] = [];
  list(): Promise<GrantView[]> {
    return Promise.resolve(this.grants);
  }
  add(): Promise<GrantView> {
    return Promise.reject(
      Object.assign(new Error("no such secret"), { code: "SECRET_NOT_FOUND" }),
    );
  }
  approve(): Promise<GrantView> {
    return Promise.reject(Object.assign(new Error("no such grant"), { code: "GRANT_NOT_FOUND" }));
  }
  revoke(): Promise<GrantView> {
    return Promise.reject(Object.assign(new Error("no such grant"), { code: "GRANT_NOT_FOUND" }));
  }
}

function auditRow(seq: number, overrides: Partial<AuditRow> = {}): AuditRow {
  return {
    seq,
    ts: "2025-01-01T00:00:00.000Z",
    session: "s-1",
    agent: "alice",
    kind: "click",
    source: "action",
    origin: "https://shop.test",
    method: "POST",
    decision: seq % 2 ? "allow" : "deny",
    reason: "OK",
    module: "baseline",
    rule: null,
    prev_hash: "0".repeat(64),
    hash: "f".repeat(64),
    ...overrides,
  };
}

class FakeAudit implements AuditPort {
  all: AuditRow[] = [1, 2, 3, 4, 5].map((n) => auditRow(n));
  filters: AuditFilter[] = [];
  rows(filter: AuditFilter): AuditRow[] {
    this.filters.push(filter);
    return this.all.filter((r) =>
      (filter.before === undefined || r.seq < filter.before) &&
      (filter.session === undefined || r.session === filter.session) &&
      (filter.decision === undefined || r.decision === filter.decision)
    ).reverse().slice(0, filter.limit);
  }
  verify() {
    return { ok: true, rows: this.all.length };
  }
  *export(): Iterable<AuditRow> {
    yield* this.all;
  }
}

class FakePolicies implements PoliciesPort {
  list: PolicyModuleView[] = [{
    name: "baseline",
    kind: "policy",
    sha256: "ab".repeat(32),
    signer: "key-1",
  }];
  modules(): PolicyModuleView[] {
    return this.list;
  }
}

function harness(
  options: { heartbeatMs?: number; adminToken?: (presented: string) => boolean } = {},
) {
  let clock = Date.parse("2025-06-01T00:00:00Z");
  const sink = new MemorySink();
  const approvals = new ApprovalBoard(new MemoryDecisionStore("approval"), sink);
  const questions = new QuestionBoard(new MemoryDecisionStore("question"), sink);
  const sessions = new FakeSessions();
  const agents = new FakeAgents();
  const domains = new FakeDomains();
  const grants = new FakeGrants();
  const audit = new FakeAudit();
  const policies = new FakePolicies();
  // The real queue and question list satisfy their ports structurally.
  const ports: { approvals: ApprovalsPort; questions: QuestionsPort } = { approvals, questions };
  const app = createConsoleApp({
    adminToken: options.adminToken ?? TOKEN,
    allowedHosts: [HOST, "localhost:8080"],
    ...ports,
    sessions,
    agents,
    domains,
    grants,
    audit,
    policies,
    heartbeatMs: options.heartbeatMs,
    now: () => clock,
    log: () => {},
  });
  return {
    app,
    sink,
    approvals,
    questions,
    sessions,
    agents,
    domains,
    grants,
    audit,
    policies,
    advance(ms: number) {
      clock += ms;
    },
    [Symbol.dispose]() {
      approvals.close();
      questions.close();
    },
  };
}
type Harness = ReturnType<typeof harness>;

interface Send {
  method?: string;
  cookie?: string;
  bearer?: string;
  csrf?: string;
  form?: Record<string, string>;
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
}

async function send(h: Harness, path: string, s: Send = {}): Promise<Response> {
  const headers: Record<string, string> = { host: HOST, ...s.headers };
  if (s.cookie) headers.cookie = s.cookie;
  if (s.bearer) headers.authorization = `Bearer ${s.bearer}`;
  let body: string | undefined = s.body;
  if (s.form) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(s.form).toString();
  } else if (s.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(s.json);
  }
  if (s.csrf) headers["x-csrf-token"] = s.csrf;
  const method = s.method ?? (body !== undefined ? "POST" : "GET");
  return await h.app.request(path, { method, headers, body });
}

/** Logs in; returns the cookie header and the session's CSRF token (read off a page). */
async function login(h: Harness): Promise<{ cookie: string; csrf: string }> {
  const res = await send(h, "/login", { form: { token: TOKEN } });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/");
  const cookie = res.headers.get("set-cookie")!.split(";")[0];
  const page = await send(h, "/", { cookie });
  assert.equal(page.status, 200);
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  assert.ok(csrf, "pages carry the CSRF token");
  return { cookie, csrf };
}

/** Reads an SSE body until `match` appears in what was read; returns all of it. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  match: string,
  seen = "",
): Promise<string> {
  const decoder = new TextDecoder();
  const deadline = Date.now() + 5_000;
  while (!seen.includes(match)) {
    assert.ok(Date.now() < deadline, `no ${match} in ${seen}`);
    const { value, done } = await reader.read();
    assert.equal(done, false, `the stream ended before ${match}`);
    seen += decoder.decode(value);
  }
  return seen;
}

// --- Login and cookies

Deno.test("createConsoleApp() login sets an HttpOnly, SameSite=Strict, Path=/ cookie", async () => {
  using h = harness();
  const form = await send(h, "/login");
  assert.equal(form.status, 200);
  assert.match(await form.text(), /name="token" type="password"/);
  const res = await send(h, "/login", { form: { token: TOKEN } });
  assert.equal(res.status, 303);
  const cookie = res.headers.get("set-cookie") ?? "";
  assert.match(cookie, /^omotai_console=[A-Za-z0-9_-]{43};/);
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.match(cookie, /Path=\//);
  const page = await send(h, "/", { cookie: cookie.split(";")[0] });
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<h1>Approvals<\/h1>/);
});

Deno.test("createConsoleApp() refuses a wrong token with 401 and the sixth try in a minute with 429", async () => {
  using h = harness();
  for (let i = 0; i < 5; i++) {
    const res = await send(h, "/login", { form: { token: `wrong-${i}` } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get("set-cookie"), null);
    assert.match(await res.text(), /not the admin token/);
  }
  // Limited: even the right token waits.
  const limited = await send(h, "/login", { form: { token: TOKEN } });
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get("retry-after")) > 0);
  await limited.body?.cancel();
  const bearer = await send(h, "/api/approvals", { bearer: TOKEN });
  assert.equal(bearer.status, 429, "bearer attempts share the limit");
  await bearer.body?.cancel();
  h.advance(61_000);
  const res = await send(h, "/login", { form: { token: TOKEN } });
  assert.equal(res.status, 303);
});

Deno.test("createConsoleApp() without a session sends pages to /login and answers the API 401", async () => {
  using h = harness();
  for (const path of ["/", "/sessions", "/audit", "/approvals/table"]) {
    const res = await send(h, path);
    assert.equal(res.status, 303, path);
    assert.equal(res.headers.get("location"), "/login");
  }
  const api = await send(h, "/api/approvals");
  assert.equal(api.status, 401);
  assert.equal((await api.json()).error, "UNAUTHORIZED");
  const forged = await send(h, "/", { cookie: "omotai_console=forged" });
  assert.equal(forged.status, 303);
});

Deno.test("createConsoleApp() sessions end after 12 hours idle and on logout", async () => {
  using h = harness();
  const { cookie } = await login(h);
  h.advance(11 * 3_600_000);
  assert.equal((await send(h, "/api/sessions", { cookie })).status, 200);
  // Each request restarts the idle clock.
  h.advance(11 * 3_600_000);
  assert.equal((await send(h, "/api/sessions", { cookie })).status, 200);
  h.advance(12 * 3_600_000 + 1);
  assert.equal((await send(h, "/api/sessions", { cookie })).status, 401);

  const again = await login(h);
  const out = await send(h, "/logout", { cookie: again.cookie, form: { csrf: again.csrf } });
  assert.equal(out.status, 303);
  assert.equal(out.headers.get("location"), "/login");
  assert.match(out.headers.get("set-cookie") ?? "", /omotai_console=;.*Max-Age=0/);
  assert.equal((await send(h, "/api/sessions", { cookie: again.cookie })).status, 401);
});

// --- CSRF and bearer

Deno.test("createConsoleApp() cookie POST without the CSRF token is 403, with it ok", async () => {
  using h = harness();
  const { cookie, csrf } = await login(h);
  const none = await send(h, "/domains", {
    cookie,
    form: { origin: "https://a.test", rule: "allow" },
  });
  assert.equal(none.status, 403);
  assert.match(await none.text(), /CSRF/);
  const wrong = await send(h, "/domains", {
    cookie,
    form: { origin: "https://a.test", rule: "allow", csrf: "x".repeat(43) },
  });
  assert.equal(wrong.status, 403);
  const json = await send(h, "/api/domains", {
    cookie,
    json: { origin: "https://a.test", rule: "allow" },
  });
  assert.equal(json.status, 403);
  assert.equal(h.domains.rules.length, 0);

  const form = await send(h, "/domains", {
    cookie,
    form: { origin: "https://a.test", rule: "allow", csrf },
  });
  assert.equal(form.status, 303);
  assert.equal(form.headers.get("location"), "/domains");
  const header = await send(h, "/api/domains", {
    cookie,
    csrf,
    json: { origin: "https://b.test", rule: "deny" },
  });
  assert.equal(header.status, 201);
  assert.deepEqual(h.domains.rules.map((r) => [r.origin, r.rule]), [
    ["https://a.test", "allow"],
    ["https://b.test", "deny"],
  ]);
  const del = await send(h, "/api/domains", {
    method: "DELETE",
    cookie,
    json: { origin: "https://b.test" },
  });
  assert.equal(del.status, 403, "DELETE needs the token too");
  await del.body?.cancel();
});

Deno.test("createConsoleApp() takes the admin token as bearer on /api/* without CSRF; an agent key is 401", async () => {
  using h = harness();
  const ok = await send(h, "/api/domains", {
    bearer: TOKEN,
    json: { origin: "https://a.test", rule: "allow" },
  });
  assert.equal(ok.status, 201);
  assert.deepEqual(await ok.json(), { origin: "https://a.test", rule: "allow" });
  const del = await send(h, "/api/domains?origin=https://a.test", {
    method: "DELETE",
    bearer: TOKEN,
  });
  assert.equal(del.status, 200);
  assert.deepEqual(await del.json(), { removed: true });

  for (const bearer of [AGENT_KEY, `${TOKEN}x`, TOKEN.slice(0, -1)]) {
    const res = await send(h, "/api/approvals", { bearer });
    assert.equal(res.status, 401, bearer);
    assert.equal((await res.json()).error, "UNAUTHORIZED");
  }
  const basic = await send(h, "/api/approvals", { headers: { authorization: `Basic ${TOKEN}` } });
  assert.equal(basic.status, 401);
  await basic.body?.cancel();
  // The bearer door is the API's only: a page is not opened by it.
  const page = await send(h, "/", { bearer: TOKEN });
  assert.equal(page.status, 303);
  // An agent key does not log in either.
  const agent = await send(h, "/login", { form: { token: AGENT_KEY } });
  assert.equal(agent.status, 401);
  await agent.body?.cancel();
});

// --- Headers, limits, errors

Deno.test("createConsoleApp() sets the CSP and secure headers on every response", async () => {
  using h = harness();
  const { cookie } = await login(h);
  const responses = [
    await send(h, "/login"),
    await send(h, "/", { cookie }),
    await send(h, "/api/approvals", { bearer: TOKEN }),
    await send(h, "/console.css"),
    await send(h, "/api/nothing-here", { bearer: TOKEN }),
    await send(h, "/api/approvals", { bearer: "wrong" }),
    await send(h, "/", { headers: { host: "evil.test:8080" } }),
  ];
  for (const res of responses) {
    const csp = res.headers.get("content-security-policy") ?? "";
    for (
      const d of [
        "default-src 'none'",
        "style-src 'self'",
        "script-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ]
    ) assert.ok(csp.includes(d), `${res.status} ${res.url}: ${d}`);
    assert.equal(res.headers.get("x-frame-options"), "DENY");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.headers.get("referrer-policy"), "no-referrer");
    assert.equal(res.headers.get("cache-control"), "no-store");
    await res.body?.cancel();
  }
  assert.deepEqual(responses.map((r) => r.status), [200, 200, 200, 200, 404, 401, 403]);
});

Deno.test("createConsoleApp() refuses a foreign Host or Origin with 403", async () => {
  using h = harness();
  const { cookie, csrf } = await login(h);
  const host = await send(h, "/login", { headers: { host: "rebind.test:8080" } });
  assert.equal(host.status, 403);
  await host.body?.cancel();
  const origin = await send(h, "/domains", {
    cookie,
    form: { origin: "https://a.test", rule: "allow", csrf },
    headers: { origin: "https://evil.test" },
  });
  assert.equal(origin.status, 403);
  await origin.body?.cancel();
  // Its own forms send their origin, or "null" (Referrer-Policy: no-referrer hides it).
  for (const own of [`http://${HOST}`, "null"]) {
    const same = await send(h, "/domains", {
      cookie,
      form: { origin: "https://a.test", rule: "allow", csrf },
      headers: { origin: own },
    });
    assert.equal(same.status, 303, own);
  }
});

Deno.test("createConsoleApp() answers 413 to a body over 64 KiB", async () => {
  using h = harness();
  const { cookie, csrf } = await login(h);
  const big = "a".repeat(70 * 1024);
  const api = await send(h, "/api/questions/x", { bearer: TOKEN, json: { answer: big } });
  assert.equal(api.status, 413);
  assert.equal((await api.json()).error, "BODY_TOO_LARGE");
  const form = await send(h, "/login", { form: { token: big } });
  assert.equal(form.status, 413);
  await form.body?.cancel();
  const withLength = await send(h, "/domains", {
    cookie,
    csrf,
    body: big,
    headers: { "content-length": String(big.length), "content-type": "text/plain" },
  });
  assert.equal(withLength.status, 413);
  await withLength.body?.cancel();
});

Deno.test("createConsoleApp() answers unknown routes 404 and bad bodies 400", async () => {
  using h = harness();
  const { cookie } = await login(h);
  const page = await send(h, "/nowhere", { cookie });
  assert.equal(page.status, 404);
  assert.match(await page.text(), /no such page/);
  const api = await send(h, "/api/nowhere", { bearer: TOKEN });
  assert.equal(api.status, 404);
  assert.deepEqual(await api.json(), { error: "NOT_FOUND", message: "no such page" });
  for (
    const body of [
      "not json",
      JSON.stringify({ decision: "maybe" }),
      JSON.stringify({}),
      JSON.stringify({ decision: "approve", extra: 1 }),
    ]
  ) {
    const res = await send(h, "/api/approvals/some-id", {
      bearer: TOKEN,
      body,
      headers: { "content-type": "application/json" },
    });
    assert.equal(res.status, 400, body);
    assert.equal((await res.json()).error, "BAD_REQUEST");
  }
  const badQuery = await send(h, "/api/audit?limit=0", { bearer: TOKEN });
  assert.equal(badQuery.status, 400);
  assert.match((await badQuery.json()).message, /limit/);
  // A port's refusal (a coded error) is a 400 with its code.
  const origin = await send(h, "/api/domains", {
    bearer: TOKEN,
    json: { origin: "ftp://x", rule: "allow" },
  });
  assert.equal(origin.status, 400);
  assert.equal((await origin.json()).error, "BAD_ORIGIN");
});

// --- Approvals and questions

Deno.test("createConsoleApp() POST /api/approvals/{id} approve resolves the queue; a second is 409", async () => {
  using h = harness();
  const answer: Promise<ApprovalOutcome> = h.approvals.request(pending());
  const list = await send(h, "/api/approvals?state=pending", { bearer: TOKEN });
  assert.equal(list.status, 200);
  const [listed] = await list.json();
  assert.equal(listed.kind, "form");
  assert.deepEqual(
    listed.request,
    formDetails("https://bank.test/transfer?to=acct-9", "amount=100").request,
    "the API answers the request view whole",
  );
  assert.equal(listed.request.url.text, "https://bank.test/transfer?to=acct-9");
  assert.deepEqual(listed.request.entries, [{
    name: { text: "amount", length: 6, flags: [] },
    value: { text: "100", length: 3, flags: [] },
  }]);
  for (const key of ["id", "agent", "session", "origin", "method", "created_at", "expires_at"]) {
    assert.ok(key in listed, key);
  }
  const first = await send(h, `/api/approvals/${listed.id}`, {
    bearer: TOKEN,
    json: { decision: "approve" },
  });
  assert.equal(first.status, 200);
  assert.deepEqual(await first.json(), { id: listed.id, state: "approved" });
  assert.deepEqual(await answer, { outcome: "approved" });
  assert.equal(h.sink.rows.at(-1)?.rule, "api");

  const second = await send(h, `/api/approvals/${listed.id}`, {
    bearer: TOKEN,
    json: { decision: "approve" },
  });
  assert.equal(second.status, 409);
  assert.equal((await second.json()).error, "NOT_PENDING");
  const unknown = await send(h, "/api/approvals/no-such-id", {
    bearer: TOKEN,
    json: { decision: "deny" },
  });
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();
  const decided = await send(h, "/api/approvals?state=decided", { bearer: TOKEN });
  assert.equal((await decided.json())[0].state, "approved");
});

Deno.test("createConsoleApp() a stored secret is absent from the approvals pages, API and events", async () => {
  using h = harness({ heartbeatMs: 20 });
  const { cookie } = await login(h);
  const secret = "Vault-Pa55word!";
  // The redactor the gate hands requestView(): every form of the secret it knows.
  const redact = (s: string) =>
    s.replaceAll(secret, "[redacted]").replaceAll(encodeURIComponent(secret), "[redacted]");
  const events = await send(h, "/api/events", { cookie });
  const reader = events.body!.getReader();
  let streamed = await readUntil(reader, "event: ready");
  const details = formDetails(
    `https://bank.test/reset/${encodeURIComponent(secret)}?token=${encodeURIComponent(secret)}`,
    new URLSearchParams([["password", secret], [secret, "1"], ["note", `is ${secret}`]])
      .toString(),
    redact,
  );
  const answer = h.approvals.request(pending({ details }));
  streamed = await readUntil(reader, '"type":"added"', streamed);
  const seen = [streamed];
  for (const path of ["/", "/approvals/table"]) {
    const page = await send(h, path, { cookie });
    assert.equal(page.status, 200);
    seen.push(await page.text());
  }
  const api = await (await send(h, "/api/approvals?state=pending", { bearer: TOKEN })).text();
  seen.push(api);
  assert.match(api, /"text":"note","length":4/);
  assert.ok(api.includes('"text":"is [redacted]"'), "the entry is there, redacted");
  h.approvals.decide((await h.approvals.list("pending"))[0].id, "deny", "api");
  await answer;
  seen.push(await (await send(h, "/api/approvals", { bearer: TOKEN })).text());
  seen.push(await (await send(h, "/", { cookie })).text());
  await reader.cancel();
  for (const text of seen) {
    for (const form of [secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]) {
      assert.equal(text.toLowerCase().includes(form.toLowerCase()), false, text.slice(0, 200));
    }
  }
  await new Promise((r) => setTimeout(r, 30));
});

Deno.test("createConsoleApp() the approval form denies with the console as decider", async () => {
  using h = harness();
  const { cookie, csrf } = await login(h);
  const answer = h.approvals.request(pending());
  const id = (await h.approvals.list("pending"))[0].id;
  const page = await (await send(h, "/", { cookie })).text();
  assert.ok(page.includes(`action="/approvals/${id}"`));
  assert.match(page, /value="approve"/);
  const res = await send(h, `/approvals/${id}`, { cookie, form: { decision: "deny", csrf } });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/");
  assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_DENIED" });
  assert.equal(h.sink.rows.at(-1)?.rule, "console");
  const again = await send(h, `/approvals/${id}`, { cookie, form: { decision: "approve", csrf } });
  assert.equal(again.headers.get("location"), "/?notice=not_pending");
  const notice = await (await send(h, "/?notice=not_pending", { cookie })).text();
  assert.match(notice, /no longer waiting/);
});

Deno.test("createConsoleApp() answers a question through the API and the form", async () => {
  using h = harness();
  const { cookie, csrf } = await login(h);
  const first = h.questions.ask({ question: "Which card?", agent: "a", session: "s" }, 60_000);
  const [q] = await (await send(h, "/api/questions?state=pending", { bearer: TOKEN })).json();
  assert.equal(q.question, "Which card?");
  const res = await send(h, `/api/questions/${q.id}`, { bearer: TOKEN, json: { answer: "Visa" } });
  assert.equal(res.status, 200);
  assert.deepEqual(await first, { answer: "Visa" });
  const again = await send(h, `/api/questions/${q.id}`, { bearer: TOKEN, json: { answer: "x" } });
  assert.equal(again.status, 409);
  await again.body?.cancel();
  const long = await send(h, `/api/questions/${q.id}`, {
    bearer: TOKEN,
    json: { answer: "x".repeat(2_001) },
  });
  assert.equal(long.status, 400);
  await long.body?.cancel();

  const second = h.questions.ask({ question: "Which day?", agent: "a", session: "s" }, 60_000);
  const id = (await h.questions.list("pending"))[0].id;
  const form = await send(h, `/questions/${id}`, { cookie, form: { answer: "Monday", csrf } });
  assert.equal(form.status, 303);
  assert.deepEqual(await second, { answer: "Monday" });
});

Deno.test("createConsoleApp() GET /api/events streams an added event when an approval arrives", async () => {
  using h = harness({ heartbeatMs: 20 });
  const { cookie } = await login(h);
  const res = await send(h, "/api/events", { cookie });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const reader = res.body!.getReader();
  let seen = await readUntil(reader, "event: ready");
  const answer = h.approvals.request(pending());
  seen = await readUntil(reader, '"type":"added"', seen);
  const line = seen.split("\n").find((l) => l.includes('"type":"added"'))!;
  const event = JSON.parse(line.slice("data: ".length));
  assert.equal(event.approval.origin, "https://bank.test");
  assert.match(seen, /event: approval/);
  h.questions.ask({ question: "q?", agent: null, session: null }, 60_000).catch(() => {});
  seen = await readUntil(reader, "event: question", seen);
  seen = await readUntil(reader, "event: heartbeat", seen);
  await reader.cancel();
  h.approvals.decide((await h.approvals.list("pending"))[0].id, "deny", "console");
  await answer;
  // Let the stream's cleanup (unsubscribe, heartbeat timer) run.
  await new Promise((r) => setTimeout(r, 30));
});

Deno.test("createConsoleApp() an event stream ends when its session logs out", async () => {
  using h = harness({ heartbeatMs: 10 });
  const { cookie, csrf } = await login(h);
  const res = await send(h, "/api/events", { cookie });
  const reader = res.body!.getReader();
  await readUntil(reader, "event: ready");
  await send(h, "/logout", { cookie, form: { csrf } });
  const deadline = Date.now() + 5_000;
  for (;;) {
    const { done } = await reader.read();
    if (done) break;
    assert.ok(Date.now() < deadline, "the stream stayed open");
  }
});

// --- Pages and escaping

Deno.test("createConsoleApp() escapes hostile values on every page", async () => {
  using h = harness();
  const { cookie, csrf } = await login(h);
  const hostile = `${HOSTILE}${HOSTILE_SCRIPT}`;
  const answer = h.approvals.request(pending({
    agent: hostile,
    session: hostile,
    details: {
      ...formDetails(
        `https://bank.test/${hostile}?q=${encodeURIComponent(hostile)}`,
        new URLSearchParams([[hostile, hostile]]).toString(),
      ),
      origin: `https://bank.test"${hostile}`,
    },
  }));
  const asked = h.questions.ask({ question: hostile, agent: hostile, session: null }, 60_000);
  h.sessions.sessions = [{
    id: hostile,
    agent: hostile,
    origin: hostile,
    actionsUsed: 3,
    tainted: true,
    isolation: "netns",
    startedAt: "2025-01-01T00:00:00.000Z",
  }];
  h.agents.agents = [{ name: hostile, policy: hostile, createdAt: hostile }];
  h.domains.rules = [{ origin: hostile, rule: "allow", added_at: hostile }];
  h.grants.grants = [{
    id: hostile,
    secret_id: hostile,
    agent: hostile,
    purpose: hostile,
    mode: "session",
    // Not a kind a stored row can read as: escaped all the same.
    uses: [{ kind: hostile as "fill", allowed_origins: [hostile] }],
    state: "revoked",
    expires_at: hostile,
    created_at: hostile,
    created_by: hostile,
    approved_at: null,
    approved_by: null,
    revoked_at: hostile,
    revoked_by: hostile,
    revoke_reason: hostile,
    session_id: hostile,
    used_at: null,
    last_redeemed_at: hostile,
    redemptions: 1,
  }];
  h.audit.all = [
    auditRow(1, { agent: hostile, origin: hostile, session: hostile, reason: hostile }),
  ];
  h.policies.list = [{ name: hostile, kind: hostile, sha256: hostile, signer: hostile }];

  const pages = [
    "/",
    "/approvals/table",
    "/questions",
    "/questions/table",
    "/sessions",
    "/domains",
    "/agents",
    "/grants",
    "/audit",
    `/audit?session=${encodeURIComponent(hostile)}`,
    "/policies",
  ];
  for (const path of pages) {
    const res = await send(h, path, { cookie });
    assert.equal(res.status, 200, path);
    const text = await res.text();
    assert.equal(text.includes(HOSTILE), false, `${path} renders the raw <img>`);
    assert.equal(text.includes(HOSTILE_SCRIPT), false, `${path} renders the raw <script>`);
    assert.ok(text.includes(ESCAPED), `${path} shows the value, escaped`);
    const scripts = text.match(/<script/g)?.length ?? 0;
    assert.equal(scripts, path.endsWith("/table") ? 0 : 1, `${path}: only the console's script`);
    assert.equal(/ on[a-z]+=/.test(text.replaceAll(ESCAPED, "")), false, `${path}: a handler`);
  }
  // A hostile agent name comes back on the new-key page: escaped too.
  const added = await send(h, "/agents", { cookie, form: { name: HOSTILE, csrf } });
  assert.equal(added.status, 200);
  const addedText = await added.text();
  assert.equal(addedText.includes(HOSTILE), false);
  assert.ok(addedText.includes(ESCAPED));
  // So does a port's error message quoting the input.
  const bad = await send(h, "/domains", { cookie, form: { origin: HOSTILE, rule: "deny", csrf } });
  assert.equal(bad.status, 400);
  assert.equal((await bad.text()).includes(HOSTILE), false);
  await h.approvals.close();
  await h.questions.close();
  await answer;
  await asked.catch(() => {});
});

Deno.test("createConsoleApp() pages show their tables and the live script", async () => {
  using h = harness();
  const { cookie } = await login(h);
  h.sessions.sessions = [{
    id: "s-42",
    agent: "alice",
    origin: "https://shop.test",
    actionsUsed: 7,
    tainted: false,
    isolation: "netns",
    startedAt: "2025-01-01T00:00:00.000Z",
  }];
  const sessions = await (await send(h, "/sessions", { cookie })).text();
  assert.match(sessions, /<td class="mono">s-42<\/td>/);
  assert.match(sessions, /action="\/sessions\/s-42\/kill"/);
  assert.match(sessions, /<th>Isolation<\/th>/);
  assert.match(sessions, /<td class="">netns<\/td>/);
  const audit = await (await send(h, "/audit?decision=deny&limit=2", { cookie })).text();
  assert.match(audit, /Chain intact: 5 rows verify/);
  assert.match(audit, /href="\/api\/audit\/export"/);
  assert.deepEqual(h.audit.filters.at(-1), { limit: 2, decision: "deny" });
  const policies = await (await send(h, "/policies", { cookie })).text();
  assert.match(policies, /<td>baseline<\/td>\s*<td>policy<\/td>\s*<td class="mono">key-1<\/td>/);
  const home = await (await send(h, "/", { cookie })).text();
  assert.match(home, /<script src="\/console.js" defer><\/script>/);
  assert.match(home, /data-live="\/approvals\/table"/);
  const js = await send(h, "/console.js", { cookie });
  assert.match(js.headers.get("content-type") ?? "", /javascript/);
  const script = await js.text();
  assert.match(script, /new EventSource\("\/api\/events"\)/);
  assert.match(script, /createOscillator/);
  assert.match(script, /document\.title/);
  const css = await send(h, "/console.css");
  assert.match(css.headers.get("content-type") ?? "", /text\/css/);
  assert.match(await css.text(), /system-ui/);
});

Deno.test("createConsoleApp() agents: the key is shown once on add; remove; sessions kill", async () => {
  using h = harness();
  const { cookie, csrf } = await login(h);
  const added = await send(h, "/agents", { cookie, form: { name: "ci-bot", csrf } });
  assert.equal(added.status, 200);
  assert.match(await added.text(), /<code class="key">omk_key-of-ci-bot<\/code>/);
  const list = await (await send(h, "/agents", { cookie })).text();
  assert.equal(list.includes("omk_key-of-ci-bot"), false, "the list never shows a key");
  const api = await send(h, "/api/agents", { bearer: TOKEN, json: { name: "helper" } });
  assert.equal(api.status, 201);
  assert.deepEqual(await api.json(), { name: "helper", key: "omk_key-of-helper" });
  const dup = await send(h, "/api/agents", { bearer: TOKEN, json: { name: "helper" } });
  assert.equal(dup.status, 400);
  assert.equal((await dup.json()).error, "AGENT_EXISTS");
  const listed = await (await send(h, "/api/agents", { bearer: TOKEN })).json();
  assert.deepEqual(listed.map((a: AgentView) => a.name), ["ci-bot", "helper"]);
  const removed = await send(h, "/agents/remove", { cookie, form: { name: "ci-bot", csrf } });
  assert.equal(removed.status, 303);
  const gone = await send(h, "/api/agents", {
    method: "DELETE",
    bearer: TOKEN,
    json: { name: "ci-bot" },
  });
  assert.equal(gone.status, 404);
  await gone.body?.cancel();

  h.sessions.sessions = [SESSION];
  assert.equal((await send(h, "/sessions/s-1/kill", { cookie, form: { csrf } })).status, 303);
  assert.deepEqual(h.sessions.killed, ["s-1"]);
  const again = await send(h, "/api/sessions/s-1/kill", { bearer: TOKEN, method: "POST" });
  assert.equal(again.status, 404);
  await again.body?.cancel();
});

Deno.test("createConsoleApp() audit API filters, verifies and exports JSONL oldest first", async () => {
  using h = harness();
  const rows = await (await send(h, "/api/audit?limit=2&before=5&decision=allow", {
    bearer: TOKEN,
  })).json();
  assert.deepEqual(rows.map((r: AuditRow) => r.seq), [3, 1]);
  assert.deepEqual(h.audit.filters.at(-1), { limit: 2, before: 5, decision: "allow" });
  const verify = await send(h, "/api/audit/verify", { bearer: TOKEN });
  assert.deepEqual(await verify.json(), { ok: true, rows: 5 });
  const exported = await send(h, "/api/audit/export", { bearer: TOKEN });
  assert.equal(exported.status, 200);
  assert.match(exported.headers.get("content-disposition") ?? "", /attachment/);
  const lines = (await exported.text()).trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((r) => r.seq), [1, 2, 3, 4, 5]);
  assert.equal(lines[0].hash, "f".repeat(64));
  const policies = await (await send(h, "/api/policies", { bearer: TOKEN })).json();
  assert.equal(policies[0].signer, "key-1");
});

Deno.test("isConsolePath() owns the console's paths and leaves MCP's alone", () => {
  for (
    const p of ["/", "/login", "/api/events", "/approvals/x", "/audit", "/console.js", "/grants"]
  ) {
    assert.equal(isConsolePath(p), true, p);
  }
  for (const p of ["/mcp", "/sse", "/messages", "/favicon.ico", "/apix", "/grantsx"]) {
    assert.equal(isConsolePath(p), false, p);
  }
});

Deno.test("isConsolePath() comes from the route table: every route is the console's, nothing else", () => {
  const paths = consoleRoutePaths();
  assert.ok(paths.includes("/api/events") && paths.includes("/grants/:id/approve"));
  for (const path of paths) {
    const concrete = path.replaceAll(/:[a-z]+/g, "x1");
    assert.equal(isConsolePath(concrete), true, concrete);
  }
  // A route added to the table is owned at once, with no second list to update.
  const owns = ownedPaths([...paths, "/reports", "/reports/:id"]);
  assert.equal(owns("/reports"), true);
  assert.equal(owns("/reports/7"), true);
  assert.equal(isConsolePath("/reports"), false);
  for (const p of ["/mcp", "/sse", "/messages", "/approvals", "/audit/x"]) {
    assert.equal(owns(p), false, p);
  }
});

Deno.test("createConsoleApp() shows this runtime's session use and cap on /sessions and /api/capacity", async () => {
  using h = harness();
  const none = await send(h, "/api/capacity", { bearer: TOKEN });
  assert.equal(none.status, 404);
  await none.body?.cancel();
  h.sessions.max = 1;
  h.sessions.sessions = [SESSION];
  assert.deepEqual(await (await send(h, "/api/capacity", { bearer: TOKEN })).json(), {
    open: 1,
    max: 1,
    agentShare: 1,
  });
  const { cookie } = await login(h);
  const page = await (await send(h, "/sessions", { cookie })).text();
  assert.match(
    page,
    /1 of 1 sessions on this runtime \(full: new sessions are refused with SERVER_BUSY\); one agent holds at most 1 \(AGENT_BUSY past it\) unless its policy's max_sessions says otherwise/,
  );
  h.sessions.max = 3;
  const share = await (await send(h, "/sessions", { cookie })).text();
  assert.match(share, /1 of 3 sessions on this runtime; one agent holds at most 2 \(AGENT_BUSY/);
  h.sessions.max = null;
  h.sessions.sessions = [];
  const open = await (await send(h, "/sessions", { cookie })).text();
  assert.match(open, /0 of unlimited sessions on this runtime<\/p>/);
});

Deno.test("createConsoleApp() answers 503 when the admin token cannot be checked, and counts no failed guess", async () => {
  let down = true;
  using h = harness({
    adminToken: (presented) => {
      if (down) throw new Error("store down");
      return presented === TOKEN;
    },
  });
  for (let i = 0; i < 8; i++) {
    const res = await send(h, "/api/agents", { bearer: TOKEN });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("retry-after"), "5");
    assert.equal((await res.json()).error, "AUTH_UNAVAILABLE");
    const login = await send(h, "/login", { form: { token: TOKEN } });
    assert.equal(login.status, 503);
    await login.body?.cancel();
  }
  down = false;
  const res = await send(h, "/api/agents", { bearer: TOKEN });
  assert.equal(res.status, 200, "not locked out by the outage");
  await res.body?.cancel();
});
