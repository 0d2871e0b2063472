/**
 * An attacker's pass over `omotai start --database URL --tenant ID` through the runtime's
 * real doors: MCP (`/mcp`, `/sse`) with agent keys, the console's `/api` with the admin
 * bearer token, and the console's pages with a logged-in cookie. Two runtimes run in this
 * process on one throwaway PostgreSQL: one of tenant `acme`, one of tenant `globex`, each
 * tenant with the admin token its owner set. Where an attack needs the database itself, it is
 * made as the runtime's login role (`omotai_app`) on a raw connection, or as the superuser
 * where only an outage or a held lock is simulated.
 *
 * Every test asserts the SAFE outcome: a test that fails is a finding. Only acme's runtime
 * ever starts a browser (one session, `ada`). Tests run in order and share the stage; the
 * outages come last (the last one leaves acme's console locked out for a minute when the
 * finding it tests is there).
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import postgres from "postgres";
import { PgAgentStore } from "../runtime/store/pg_agent_store.ts";
import type { Approval } from "../runtime/store/decision_store.ts";
import { PgDecisionStore } from "../runtime/store/pg_decision_store.ts";
import { approvalRecord } from "../runtime/approvals/approval_board.ts";
import { PgAuditLog } from "../runtime/store/pg_audit_log.ts";
import { type Runtime, startRuntime } from "../runtime/cli/start.ts";
import { PgDatabase } from "../runtime/store/pg_database.ts";
import { rotateAdminToken } from "../runtime/store/pg_admin_token.ts";
import { addTenant, bindTenantLogin } from "../runtime/store/pg_tenants.ts";
import { html, serveTwoOrigins } from "./fixtures/two_origins.ts";
import {
  type CallOutcome,
  eventually,
  keyedTransport,
  refOf,
  TestClient,
} from "./helpers/harness.ts";
import { pending as heldClick } from "./helpers/pending_approval.ts";
import {
  asTenant,
  clientFaultsTolerated,
  clusterTeardown,
  startPostgres,
} from "./helpers/postgres.ts";
import { processRedactor } from "../runtime/redact/mod.ts";

/** Every test here shares the cluster, the runtimes and their pools. */
function attack(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, fn, sanitizeOps: false, sanitizeResources: false });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A pending approval as a runtime posts it (a held form post), of `agent`, for 2 minutes. */
const seeded = (agent: string): Approval =>
  approvalRecord(heldClick({ agent, timeoutMs: 120_000 }), Date.now())!;

// ---------------------------------------------------------------------------------------
// The stage: a cluster, two tenants, their agents, a site, and one runtime per tenant.

const pg = await startPostgres();
// The attacks stop the server: the client's known faults on a cut connection are let pass
// for the whole file (they can surface after the attack that caused them ended).
const faults = clientFaultsTolerated();
/** The runtimes' data dirs, removed at the end. */
const dirs: string[] = [];
/** What the stage made so far, undone (with the cluster) should a later step of it fail. */
const made: AsyncDisposable[] = [];
async function staged<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    for (const m of made.reverse()) await Promise.resolve(m[Symbol.asyncDispose]()).catch(() => {});
    await pg[Symbol.asyncDispose]();
    for (const d of dirs) await Deno.remove(d, { recursive: true }).catch(() => {});
    throw err;
  }
}
const owner = await staged(() => PgDatabase.open({ url: pg.ownerUrl }, "owner"));
made.push(owner);
await staged(async () => {
  await owner.migrate();
  await addTenant(owner, "acme");
  await addTenant(owner, "globex");
});
// Each tenant's admin token, set by the owner (`omotai tenant token`): the console's and
// /api's credential on every runtime of that tenant.
const acmeToken = await staged(() => rotateAdminToken(owner, "acme"));
let globexToken = await staged(() => rotateAdminToken(owner, "globex"));

/** The superuser: only to make logins and to stop things (a held lock), never to attack. */
const su = postgres(pg.superUrl, { max: 2, onnotice: () => {} });
/**
 * A login of each tenant's runtimes, bound to its tenant by the owner, as docs/deploy.md
 * makes them (`CREATE ROLE … IN ROLE omotai_runtime`, `omotai tenant bind`).
 */
async function tenantLogin(tenant: string): Promise<string> {
  const role = `omotai_${tenant}_rt`;
  await su.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD 'pw-${role}' IN ROLE omotai_runtime`);
  await bindTenantLogin(owner, tenant, role);
  const url = new URL(pg.appUrl);
  url.username = role;
  url.password = `pw-${role}`;
  return url.href;
}
const ACME_LOGIN = await staged(() => tenantLogin("acme"));
const GLOBEX_LOGIN = await staged(() => tenantLogin("globex"));
/** globex's runtime login on a raw connection: what a compromised globex runtime can send. */
const evil = postgres(GLOBEX_LOGIN, { max: 2, onnotice: () => {} });
/** The runtime's own classes on the runtime's login, for honest seeding of each tenant. */
const appDb = await staged(() => PgDatabase.open({ url: pg.appUrl }));
made.push(appDb, { [Symbol.asyncDispose]: () => evil.end({ timeout: 1 }) }, {
  [Symbol.asyncDispose]: () => su.end({ timeout: 1 }),
});

const acmeAgents = new PgAgentStore(owner, "acme");
const globexAgents = new PgAgentStore(owner, "globex");
const ada = await staged(() => acmeAgents.add("ada"));
const acmeBot = await staged(() => acmeAgents.add("bot"));
const gina = await staged(() => globexAgents.add("gina"));
const globexBot = await staged(() => globexAgents.add("bot"));

const site = serveTwoOrigins(() => ({
  "/plain": () =>
    html(`<form method="post" action="/transfer">
      <input name="amount" value="10"><input name="to" value="alice">
      <button type="submit">Pay</button></form>`),
  "/page": () => html("<h1>Just a page</h1>", "Page"),
  "/page-other": () => html("<h1>Other origin</h1>", "Other"),
  // A page whose own script makes a request 3 s after it loaded (after the call returned).
  "/late": () =>
    html(
      `<h1>Late</h1><script>setTimeout(() => { fetch("/beacon").catch(() => {});
        new Image().src = "/beacon-img"; }, 3000);</script>`,
      "Late",
    ),
  "/beacon": () => new Response("ok"),
  "/beacon-img": () => new Response("ok"),
  "/transfer": () => html("<p>sent</p>", "Sent"),
}));
made.push(site);

const POLICY = `allowed_origins: [${site.origin}]\nread_only: true\nconfirm_writes: true\n` +
  `confirm_timeout_seconds: 10\n`;

/**
 * How long a runtime here lets its tenant's admin token hash go unread before it refuses
 * every bearer: the product's 30 s (`ADMIN_STALE_MS`, kept by runtime/store/
 * pg_admin_token_test.ts) narrowed, so the long outage below gets past it without waiting
 * half a minute; still longer than a refresh (5 s) and the short outage, so only the long one
 * makes the hash stale.
 */
const ADMIN_STALE_MS = 12_000;

async function runtimeOf(tenant: string, database = pg.appUrl): Promise<Runtime> {
  const dataDir = await Deno.makeTempDir({ prefix: `omotai-attack-${tenant}-` });
  dirs.push(dataDir);
  const policy = `${dataDir}/policy.yaml`;
  await Deno.writeTextFile(policy, POLICY);
  return await startRuntime({
    mode: "sse",
    host: "127.0.0.1",
    port: 0,
    dataDir,
    policy,
    warmBrowsers: 0,
    isolation: { mode: "off" },
    vaultKey: {},
    database,
    tenant,
    adminStaleMs: ADMIN_STALE_MS,
  });
}

Deno.env.delete("OMOTAI_ADMIN_TOKEN");
const A = await staged(() => runtimeOf("acme", ACME_LOGIN));
made.push(A);
const G = await staged(() => runtimeOf("globex", GLOBEX_LOGIN));
made.push(G);
const tokenOf = (rt: Runtime) => rt === A ? acmeToken : globexToken;

const clients: TestClient[] = [];
async function connect(rt: Runtime, key: string): Promise<TestClient> {
  const client = new Client({ name: "shared-store-attack", version: "0" });
  await client.connect(keyedTransport(rt.url!, key, "http"));
  const c = new TestClient(client);
  clients.push(c);
  return c;
}

/** ada's MCP session on acme: the only one that ever drives a browser. */
const adaClient = await staged(() => connect(A, ada.key));

// ---------------------------------------------------------------------------------------
// Doors.

/** A call to `rt`'s operator API with `token` (default: its own admin token). */
function api(rt: Runtime, path: string, init: RequestInit = {}, token = tokenOf(rt)) {
  return fetch(`${rt.url}${path}`, {
    ...init,
    headers: {
      Authorization: `Bearer ${token}`,
      "content-type": "application/json",
      ...init.headers,
    },
  });
}

async function statusOf(r: Response | Promise<Response>): Promise<number> {
  const res = await r;
  await res.body?.cancel();
  return res.status;
}

async function json<T>(rt: Runtime, path: string, init?: RequestInit): Promise<T> {
  const r = await api(rt, path, init);
  const text = await r.text();
  assert.ok(r.ok, `${path}: ${r.status} ${text}`);
  return JSON.parse(text) as T;
}

const decide = (rt: Runtime, id: string, decision: "approve" | "deny", token?: string) =>
  api(rt, `/api/approvals/${id}`, { method: "POST", body: JSON.stringify({ decision }) }, token);

/** The MCP door's answer to one request carrying `key`. */
async function mcpStatus(rt: Runtime, key: string): Promise<number> {
  return await statusOf(fetch(`${rt.url}/mcp`, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  }));
}

/** A logged-in console session on `rt`: its cookie and CSRF token. */
async function login(rt: Runtime): Promise<{ cookie: string; csrf: string }> {
  const r = await fetch(`${rt.url}/login`, {
    method: "POST",
    body: new URLSearchParams({ token: tokenOf(rt) }),
    redirect: "manual",
  });
  await r.body?.cancel();
  assert.equal(r.status, 303, "logged in");
  const cookie = r.headers.get("set-cookie")!.split(";")[0];
  const page = await consolePage(rt, "/", cookie);
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1];
  assert.ok(csrf, "the page carries a CSRF token");
  return { cookie, csrf };
}

/** A console page's HTML, read with a logged-in session; it must render (200). */
async function consolePage(rt: Runtime, path: string, cookie: string): Promise<string> {
  const r = await fetch(`${rt.url}${path}`, { headers: { cookie } });
  const text = await r.text();
  assert.equal(r.status, 200, `${path}: ${text.slice(0, 500)}`);
  return text;
}

/** A console form post with a logged-in session. */
function formPost(
  rt: Runtime,
  path: string,
  s: { cookie: string; csrf: string },
  fields: Record<string, string> = {},
) {
  return fetch(`${rt.url}${path}`, {
    method: "POST",
    headers: { cookie: s.cookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf: s.csrf, ...fields }),
    redirect: "manual",
  });
}

interface SessionRow {
  id: string;
  agent: string | null;
  runtime?: string;
  gone?: boolean;
}

/** The id of `agent`'s session held by `rt` itself. */
async function sessionOf(rt: Runtime, agent: string): Promise<string> {
  let id: string | undefined;
  assert.ok(
    await eventually(async () => {
      const list = await json<SessionRow[]>(rt, "/api/sessions");
      id = list.find((s) => s.agent === agent && s.runtime === undefined)?.id;
      return id !== undefined;
    }, 10_000),
    `${agent} has a session`,
  );
  return id!;
}

/** Waits until `rt` lists a pending approval of `agent`; returns it. */
async function pendingOf(rt: Runtime, agent: string): Promise<Approval> {
  let found: Approval | undefined;
  assert.ok(
    await eventually(async () => {
      const r = await api(rt, "/api/approvals?state=pending");
      if (!r.ok) {
        await r.body?.cancel();
        return false;
      }
      found = (await r.json() as Approval[]).find((a) => a.agent === agent);
      return found !== undefined;
    }, 15_000),
    `a pending approval of ${agent}`,
  );
  return found!;
}

/** A promise whose settling can be looked at. */
function tracked<T>(p: Promise<T>): { p: Promise<T>; done: () => boolean } {
  let done = false;
  p.then(() => done = true, () => done = true);
  return { p, done: () => done };
}

const postsTo = (path: string) => site.posts.get(path)?.length ?? 0;
const hitsOf = (prefix: string) => site.hits.filter((h) => h.startsWith(prefix)).length;
const approved = (r: CallOutcome) => /the operator approved/.test(r.text);

/** ada on /plain, then a click on Pay that waits on a confirm; the pending approval. */
async function raiseConfirm() {
  const page = await adaClient.call("browser_navigate", { url: `${site.origin}/plain` });
  assert.ok(!page.isError, page.text);
  const click = tracked(
    adaClient.call("browser_click", { ref: refOf(page.text, /button "Pay"/) }),
  );
  const pending = await pendingOf(A, "ada");
  return { click, pending };
}

/** ada's navigation, retried until the runtime (and its database) answers again. */
async function adaRecovered(path = "/page"): Promise<void> {
  assert.ok(
    await eventually(async () => {
      const r = await adaClient.call("browser_navigate", { url: `${site.origin}${path}` });
      return !r.isError;
    }, 40_000),
    "acme's runtime recovered",
  );
}

// ---------------------------------------------------------------------------------------
// Starting.

attack(
  "start: a runtime of a tenant the owner never added, or logging in as the schema owner, does not start",
  async () => {
    await assert.rejects(
      () => runtimeOf("initech"),
      (e: Error & { code?: string }) => e.code === "TENANT_UNKNOWN",
    );
    await assert.rejects(
      () => runtimeOf("acme", pg.ownerUrl),
      (e: Error & { code?: string }) => e.code === "DB_ROLE_UNSAFE",
    );
  },
);

// ---------------------------------------------------------------------------------------
// Credentials of one tenant on the other's runtime.

attack(
  "admin door: globex's admin token, an agent key and a globex console cookie open nothing on acme's /api and console",
  async () => {
    for (const path of ["/api/status", "/api/approvals"]) {
      assert.equal(await statusOf(api(A, path, {}, globexToken)), 401, path);
    }
    assert.equal(await statusOf(api(A, "/api/agents", {}, ada.key)), 401, "an agent key");
    assert.equal(await statusOf(api(G, "/api/status", {}, acmeToken)), 401, "acme's on globex");
    assert.equal(await statusOf(fetch(`${A.url}/api/status`)), 401, "no token");
    // A cookie from globex's console is no session on acme's.
    const g = await login(G);
    const page = await fetch(`${A.url}/`, { headers: { cookie: g.cookie }, redirect: "manual" });
    await page.body?.cancel();
    assert.equal(page.status, 303);
    assert.equal(page.headers.get("location"), "/login");
    assert.equal(
      await statusOf(formPost(A, "/approvals/x", g, { decision: "approve" })),
      401,
      "globex's cookie and CSRF token post nothing on acme",
    );
    // The admin token is no agent key.
    assert.equal(await mcpStatus(A, acmeToken), 401);
  },
);

attack(
  "admin door: globex's token rotated leaves acme's token working and stops globex's old one within a refresh",
  async () => {
    const old = globexToken;
    globexToken = await rotateAdminToken(owner, "globex");
    await sleep(6_500); // past a refresh (5 s) of both runtimes
    assert.equal(await statusOf(api(G, "/api/status")), 200, "globex's new token");
    assert.equal(await statusOf(api(G, "/api/status", {}, old)), 401, "globex's old token");
    assert.equal(await statusOf(api(A, "/api/status")), 200, "acme's token");
    assert.equal(await statusOf(api(A, "/api/status", {}, globexToken)), 401);
  },
);

attack(
  "MCP door: globex's keys (one of an agent named like acme's) open nothing on acme's /mcp or /sse, and acme's nothing on globex's",
  async () => {
    for (const key of [gina.key, globexBot.key]) {
      assert.equal(await mcpStatus(A, key), 401);
      assert.equal(
        await statusOf(fetch(`${A.url}/sse`, { headers: { Authorization: `Bearer ${key}` } })),
        401,
      );
    }
    for (const key of [ada.key, acmeBot.key]) assert.equal(await mcpStatus(G, key), 401);
    // Each key opens its own tenant's runtime (the positive control: not a blanket 401).
    assert.notEqual(await mcpStatus(A, acmeBot.key), 401);
    assert.notEqual(await mcpStatus(G, gina.key), 401);
  },
);

// ---------------------------------------------------------------------------------------
// Reading and changing the other tenant's things through acme's console.

attack(
  "approvals: acme's API, pages and live event stream show none of globex's approvals, and decide none of them by id",
  async () => {
    const gBoard = await PgDecisionStore.open(appDb, "globex", "approval", {
      runtime: "rt-globex-seed",
    });
    const aBoard = await PgDecisionStore.open(appDb, "acme", "approval", {
      runtime: "rt-acme-seed",
    });
    const gPending = seeded("gina");
    const gDecided = seeded("gina");
    try {
      await gBoard.post(gPending);
      await gBoard.post(gDecided);
      assert.equal(await gBoard.decide(gDecided.id, { state: "denied", by: "console" }), "ok");
      const ids = new Set([gPending.id, gDecided.id]);
      for (const q of ["", "?state=pending", "?state=decided"]) {
        const list = await json<Approval[]>(A, `/api/approvals${q}`);
        assert.ok(!list.some((a) => ids.has(a.id)), `acme's /api/approvals${q}`);
      }
      for (const d of ["approve", "deny"] as const) {
        assert.equal(await statusOf(decide(A, gPending.id, d)), 404, `${d} through acme's API`);
      }
      const s = await login(A);
      const form = await formPost(A, `/approvals/${gPending.id}`, s, { decision: "approve" });
      await form.body?.cancel();
      assert.match(form.headers.get("location") ?? "", /notice=unknown/);
      const page = await consolePage(A, "/", s.cookie);
      assert.ok(!page.includes(gPending.id), "acme's approvals page");
      assert.equal((await gBoard.get(gPending.id))?.state, "pending", "globex's is untouched");

      // The live view: an acme change is announced, a globex one (same channel) is not.
      const ctl = new AbortController();
      const r = await api(A, "/api/events", { signal: ctl.signal });
      assert.equal(r.status, 200);
      const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      const reading = (async () => {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) return;
            seen += value;
          }
        } catch { /* aborted */ }
      })();
      assert.ok(
        await eventually(() => seen.includes("event: ready"), 5_000),
        "the stream is ready",
      );
      const gNew = seeded("gina");
      const aNew = seeded("seeded-acme");
      await gBoard.post(gNew);
      await aBoard.post(aNew);
      assert.ok(await eventually(() => seen.includes(aNew.id), 5_000), "acme's own is announced");
      await sleep(500);
      ctl.abort();
      await reading;
      assert.ok(!seen.includes(gNew.id), "globex's approval reached acme's live view");
      await aBoard.end(aNew.id, "withdrawn");
      await gBoard.end(gNew.id, "withdrawn");
    } finally {
      await gBoard.end(gPending.id, "withdrawn").catch(() => {});
      await gBoard[Symbol.asyncDispose]();
      await aBoard[Symbol.asyncDispose]();
    }
  },
);

attack(
  "domains: rules set on globex neither list on nor apply to acme, acme cannot remove them, and a spoofed domains NOTIFY changes nothing",
  async () => {
    // ada's first navigation (the one browser launch of this file).
    const first = await adaClient.call("browser_navigate", { url: `${site.origin}/page` });
    assert.ok(!first.isError, first.text);
    for (
      const [origin, rule] of [[site.origin, "deny"], [site.otherOrigin, "allow"]] as const
    ) {
      const r = await api(G, "/api/domains", {
        method: "POST",
        body: JSON.stringify({ origin, rule }),
      });
      assert.equal(r.status, 201, await r.text());
    }
    try {
      // A runtime's login can announce a change of any tenant's rules.
      const acmeHash = createHash("sha256").update("acme").digest("hex");
      for (let i = 0; i < 3; i++) {
        await evil`SELECT pg_notify('omotai_domains', ${acmeHash})`;
        await evil`SELECT pg_notify('omotai_domains', 'garbage')`;
      }
      await sleep(2_500); // past a poll of acme's rules
      const listed = await json<{ origin: string }[]>(A, "/api/domains");
      assert.ok(!listed.some((d) => d.origin === site.origin || d.origin === site.otherOrigin));
      const ok = await adaClient.call("browser_navigate", { url: `${site.origin}/page` });
      assert.ok(!ok.isError, `globex's deny applied on acme: ${ok.text}`);
      const before = hitsOf("GET /page-other");
      const other = await adaClient.call("browser_navigate", {
        url: `${site.otherOrigin}/page-other`,
      });
      assert.equal(other.isError, true, "globex's allow opened an origin to acme's agent");
      assert.equal(hitsOf("GET /page-other"), before);
      assert.equal(
        await statusOf(api(A, `/api/domains?origin=${encodeURIComponent(site.origin)}`, {
          method: "DELETE",
        })),
        404,
        "acme's API removes globex's rule",
      );
      const kept = await json<{ origin: string }[]>(G, "/api/domains");
      assert.equal(kept.length, 2, "globex's rules are intact");
    } finally {
      for (const origin of [site.origin, site.otherOrigin]) {
        await api(G, `/api/domains?origin=${encodeURIComponent(origin)}`, { method: "DELETE" })
          .then((r) => r.body?.cancel());
      }
    }
  },
);

attack(
  "sessions: acme's console neither lists nor kills globex's session by id (API, console form, the app role), and globex's login cannot mark acme's",
  async () => {
    const g = await connect(G, gina.key);
    const gid = await sessionOf(G, "gina");
    const aid = await sessionOf(A, "ada");
    // Mirrored to the shared table by globex's runtime (every 2 s).
    assert.ok(
      await eventually(
        async () =>
          (await owner.transaction((tx) => tx`SELECT 1 FROM live_sessions WHERE id = ${gid}`))
            .length === 1,
        6_000,
      ),
      "globex's session is in the shared table",
    );
    const listed = await json<SessionRow[]>(A, "/api/sessions");
    assert.ok(!listed.some((s) => s.id === gid), "acme lists globex's session");
    assert.equal(await statusOf(api(A, `/api/sessions/${gid}/kill`, { method: "POST" })), 404);
    const s = await login(A);
    assert.equal(await statusOf(formPost(A, `/sessions/${gid}/kill`, s)), 404);
    // globex's login naming acme acts for nobody (refused), naming globex finds no acme row.
    const killed = await asTenant(
      evil,
      "acme",
      (tx) => tx`SELECT live_kill(${gid}) AS killed`,
    ).then(([r]) => r.killed as boolean, (e: Error) => {
      assert.match(e.message, /TENANT_UNSET/);
      return false;
    });
    assert.equal(killed, false);
    const [{ killed: k2 }] = await asTenant(
      evil,
      "globex",
      (tx) => tx`SELECT live_kill(${aid}) AS killed`,
    );
    assert.equal(k2, false);
    await sleep(2_500); // a beat of both runtimes
    const marks = await owner.transaction((tx) =>
      tx`SELECT id FROM live_sessions WHERE id IN (${gid}, ${aid})
      AND kill_requested_at IS NOT NULL`
    );
    assert.equal(marks.length, 0, "a kill mark landed on the other tenant's session");
    assert.ok((await json<SessionRow[]>(G, "/api/sessions")).some((x) => x.id === gid));
    assert.ok((await json<SessionRow[]>(A, "/api/sessions")).some((x) => x.id === aid));
    await g.client.listTools(); // still served
  },
);

attack(
  "agents: the same name in both tenants; globex removing its 'bot' leaves acme's 'bot' and its session; acme neither lists nor removes globex's agents; a removed key opens nothing",
  async () => {
    const b = await connect(A, acmeBot.key);
    await sessionOf(A, "bot");
    const names = (await json<{ name: string }[]>(A, "/api/agents")).map((a) => a.name);
    assert.ok(names.includes("bot") && names.includes("ada"));
    assert.ok(!names.includes("gina"), "acme lists globex's agent");
    assert.equal(
      await statusOf(api(A, "/api/agents?name=gina", { method: "DELETE" })),
      404,
      "acme's API removes globex's agent",
    );
    assert.ok((await json<{ name: string }[]>(G, "/api/agents")).some((a) => a.name === "gina"));
    assert.notEqual(await mcpStatus(G, gina.key), 401, "gina's key still works on globex");

    // Globex removes its own 'bot'.
    assert.equal(await statusOf(api(G, "/api/agents?name=bot", { method: "DELETE" })), 200);
    assert.equal(await mcpStatus(G, globexBot.key), 401, "globex's removed key");
    await sleep(2_000); // past acme's agent watch
    await b.client.listTools(); // acme's bot goes on
    assert.ok((await json<SessionRow[]>(A, "/api/sessions")).some((s) => s.agent === "bot"));
    assert.notEqual(await mcpStatus(A, acmeBot.key), 401);

    // Acme removes its own: the key opens nothing and the session ends.
    assert.equal(await statusOf(api(A, "/api/agents?name=bot", { method: "DELETE" })), 200);
    assert.equal(await mcpStatus(A, acmeBot.key), 401);
    assert.ok(
      await eventually(
        async () => !(await json<SessionRow[]>(A, "/api/sessions")).some((s) => s.agent === "bot"),
        5_000,
      ),
      "the removed agent's session ended",
    );
    await assert.rejects(() => b.client.listTools(), "the removed agent's session answers nothing");
    // Added again under the same name: a new key; the old one stays dead.
    const again = await json<{ key: string }>(A, "/api/agents", {
      method: "POST",
      body: JSON.stringify({ name: "bot" }),
    });
    assert.notEqual(await mcpStatus(A, again.key), 401);
    assert.equal(await mcpStatus(A, acmeBot.key), 401, "a removed key revived by a new agent");
    assert.equal(await mcpStatus(G, again.key), 401);
  },
);

attack(
  "audit: acme's /api/audit, /api/audit/export, /api/audit/verify and /audit page hold only acme's chain",
  async () => {
    const marker = `gina-${crypto.randomUUID().slice(0, 8)}`;
    const gLog = new PgAuditLog(appDb, "globex", { redactor: processRedactor() });
    await gLog.append([{
      kind: "navigate",
      source: "action",
      agent: marker,
      session: marker,
      origin: "https://globex.example",
      decision: "allow",
      reason: "OK",
    }]);
    const gid = await sessionOf(G, "gina");
    const rows = await json<{ agent: string | null; session: string | null }[]>(
      A,
      "/api/audit?limit=1000",
    );
    assert.ok(rows.length > 0);
    assert.ok(!rows.some((r) => r.agent === marker || r.agent === "gina" || r.session === gid));
    assert.deepEqual(await json(A, `/api/audit?session=${marker}`), []);
    const exported = await (await api(A, "/api/audit/export")).text();
    assert.ok(!exported.includes(marker) && !exported.includes("globex.example"));
    const exportedHashes = exported.trim().split("\n").map((l) => JSON.parse(l).hash as string);
    const globexHashes = new Set(
      (await new PgAuditLog(owner, "globex", { redactor: processRedactor() }).rows()).map((r) =>
        r.hash
      ),
    );
    assert.ok(!exportedHashes.some((h) => globexHashes.has(h)), "a globex row in acme's export");
    const verified = await json<{ ok: boolean; rows: number }>(A, "/api/audit/verify");
    assert.ok(verified.ok);
    const acmeCount =
      (await new PgAuditLog(owner, "acme", { redactor: processRedactor() }).rows()).length;
    assert.ok(verified.rows <= acmeCount && verified.rows >= exportedHashes.length);
    const s = await login(A);
    const page = await consolePage(A, "/audit?limit=1000", s.cookie);
    assert.ok(!page.includes(marker), "acme's audit page");
  },
);

attack(
  "questions: acme's API and page show none of globex's pending ask_human questions and answer none of them by id; a spoofed NOTIFY answers nothing",
  async () => {
    const g = await connect(G, gina.key);
    const text = `globex-question-${crypto.randomUUID()}`;
    const asked = tracked(g.call("ask_human", { question: text }));
    let id: string | undefined;
    assert.ok(
      await eventually(async () => {
        const list = await json<{ id: string; question: string }[]>(G, "/api/questions");
        id = list.find((q) => q.question === text)?.id;
        return id !== undefined;
      }, 10_000),
      "globex lists its question",
    );
    try {
      for (const q of ["", "?state=pending", "?state=answered"]) {
        const r = await api(A, `/api/questions${q}`);
        const body = await r.text();
        assert.equal(r.status, 200, body);
        assert.ok(!body.includes(id!) && !body.includes(text), `acme's /api/questions${q}`);
      }
      const r = await api(A, `/api/questions/${id}`, {
        method: "POST",
        body: JSON.stringify({ answer: "from acme" }),
      });
      assert.equal(r.status, 404, await r.text());
      const s = await login(A);
      assert.ok(!(await consolePage(A, "/questions", s.cookie)).includes(text));
      await evil`SELECT pg_notify('omotai_questions', ${id!})`;
      await sleep(1_000);
      assert.equal(asked.done(), false, "globex's question was released");
      const ok = await api(G, `/api/questions/${id}`, {
        method: "POST",
        body: JSON.stringify({ answer: "from globex" }),
      });
      assert.equal(ok.status, 200, await ok.text());
      const answer = await asked.p;
      assert.match(answer.text, /from globex/);
      assert.doesNotMatch(answer.text, /from acme/);
    } finally {
      await api(G, `/api/questions/${id}`, {
        method: "POST",
        body: JSON.stringify({ answer: "cleanup" }),
      }).then((r) => r.body?.cancel()).catch(() => {});
      await asked.p;
    }
  },
);

// ---------------------------------------------------------------------------------------
// A call waiting on a confirm.

attack(
  "confirm: globex's API, globex's login (naming its own tenant), a same-id approval approved in globex and spoofed NOTIFYs do not release acme's waiting call; a replayed decision loses",
  async () => {
    const posts = postsTo("/transfer");
    const { click, pending } = await raiseConfirm();
    try {
      assert.equal(await statusOf(decide(G, pending.id, "approve")), 404, "globex's API");
      for (const tenant of ["globex", null]) {
        const r = await asTenant(
          evil,
          tenant,
          (tx) =>
            tx`UPDATE approvals SET state = 'approved', decided_at = now(), decided_by = 'api'
          WHERE id = ${pending.id}`,
        );
        assert.equal(r.count, 0, `globex's login (tenant ${tenant}) approved acme's approval`);
      }
      // The id travels on the shared channel: a globex runtime posts its own row under it,
      // approves it in its own tenant, and announces it; then plain spoofed notifications.
      await asTenant(evil, "globex", async (tx) => {
        await tx`INSERT INTO approvals (tenant_id, id, runtime, agent, session, origin, method,
          kind, request, created_at, expires_at, state)
        VALUES ('globex', ${pending.id}, 'rt-evil', 'ada', ${pending.session},
          ${pending.origin}, 'POST', 'form', ${
          tx.json(JSON.parse(JSON.stringify(pending.request)))
        },
          now(), now() + interval '5 min', 'pending')`;
        await tx`UPDATE approvals SET state = 'approved', decided_at = now(), decided_by = 'api'
        WHERE tenant_id = 'globex' AND id = ${pending.id}`;
        await tx`SELECT pg_notify('omotai_approvals', ${pending.id})`;
      });
      for (const payload of [pending.id, pending.id, ` ${pending.id}`, "", "x".repeat(7000)]) {
        await evil`SELECT pg_notify('omotai_approvals', ${payload})`;
      }
      await sleep(1_500);
      assert.equal(click.done(), false, "the waiting call was released");
      assert.equal(postsTo("/transfer"), posts);
      const still = await json<Approval[]>(A, "/api/approvals?state=pending");
      assert.ok(still.some((a) => a.id === pending.id && a.state === "pending"));
      assert.equal(await statusOf(decide(A, pending.id, "deny")), 200);
      const result = await click.p;
      assert.ok(!approved(result), result.text);
      assert.equal(postsTo("/transfer"), posts, "no POST");
      // The decision replayed, either way, loses.
      assert.equal(await statusOf(decide(A, pending.id, "deny")), 409);
      assert.equal(await statusOf(decide(A, pending.id, "approve")), 409);
      const audit = await json<{ kind: string; reason: string | null; rule: string | null }[]>(
        A,
        `/api/audit?limit=50&session=${pending.session}`,
      );
      assert.ok(audit.some((r) => r.kind === "approval" && r.reason === "CONFIRM_DENIED"));
      assert.ok(!audit.some((r) => r.kind === "approval" && r.reason === "APPROVED"));
    } finally {
      await decide(A, pending.id, "deny").then((r) => r.body?.cancel()).catch(() => {});
      await click.p;
    }
  },
);

attack(
  "confirm: a globex runtime's login naming acme in app.tenant_id cannot approve acme's waiting call (logins bound to tenants)",
  async () => {
    const posts = postsTo("/transfer");
    const { click, pending } = await raiseConfirm();
    let updated = 0;
    try {
      try {
        // No acme credential used: globex's runtime login, naming acme, as a globex runtime
        // that turned hostile would.
        const r = await asTenant(evil, "acme", async (tx) => {
          const won = await tx`UPDATE approvals SET state = 'approved', decided_at = now(),
            decided_by = 'console'
          WHERE id = ${pending.id} AND state = 'pending'`;
          await tx`SELECT pg_notify('omotai_approvals', ${pending.id})`;
          return won;
        });
        updated = r.count;
      } catch { /* refused: the safe outcome */ }
      if (updated === 0) await decide(A, pending.id, "deny").then((r) => r.body?.cancel());
      const result = await click.p;
      assert.equal(updated, 0, "another tenant's login decided acme's approval");
      assert.ok(!approved(result), "acme's call ran on another tenant's approval");
      assert.equal(postsTo("/transfer"), posts);
    } finally {
      await decide(A, pending.id, "deny").then((r) => r.body?.cancel()).catch(() => {});
      await click.p;
    }
  },
);

attack(
  "audit unavailable: with acme's chain head locked, an approved confirm and a navigation do not run",
  async () => {
    await adaRecovered();
    const posts = postsTo("/transfer");
    const { click, pending } = await raiseConfirm();
    // The superuser holds acme's head row: no acme row can be kept (lock_timeout) meanwhile.
    let release!: () => void;
    const held = new Promise<void>((r) => release = r);
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => locked = r);
    const lock = su.begin(async (tx) => {
      await tx`SELECT head_seq FROM audit_heads WHERE tenant_id = 'acme' FOR UPDATE`;
      locked();
      await held;
    });
    try {
      await isLocked;
      assert.equal(await statusOf(decide(A, pending.id, "approve")), 200);
      const result = await click.p;
      assert.ok(!approved(result), `approved without its audit row: ${result.text}`);
      assert.equal(postsTo("/transfer"), posts, "the POST went out without its audit row");
      const hits = hitsOf("GET /page");
      const nav = await adaClient.call("browser_navigate", { url: `${site.origin}/page` });
      assert.equal(nav.isError, true, nav.text);
      assert.equal(hitsOf("GET /page"), hits, "a navigation ran without its audit row");
    } finally {
      release();
      await lock.catch(() => {});
      await click.p;
    }
  },
);

attack(
  "outage: the database stopped after a page loaded: the page's own later requests do not leave",
  async () => {
    await adaRecovered();
    const r = await adaClient.call("browser_navigate", { url: `${site.origin}/late` });
    assert.ok(!r.isError, r.text);
    const loaded = Date.now();
    const before = hitsOf("GET /beacon");
    await pg.stop();
    const stoppedAfter = Date.now() - loaded;
    try {
      await sleep(Math.max(0, 4_500 - (Date.now() - loaded)));
      if (stoppedAfter < 2_800) {
        assert.equal(hitsOf("GET /beacon"), before, "a request left while no row could be kept");
      } else console.log(`  inconclusive: the stop took ${stoppedAfter} ms`);
    } finally {
      await pg.start();
    }
  },
);

attack(
  "status: after the database is back, /api/status says so again without waiting for an agent's action",
  async () => {
    // Right after the previous outage (whose page request failed to be written); no agent acts.
    let last = "";
    const ok = await eventually(async () => {
      const r = await api(A, "/api/status");
      last = `${r.status} ${await r.text()}`;
      return r.ok && (JSON.parse(last.slice(4)) as { storeAvailable: boolean }).storeAvailable;
    }, 12_000);
    assert.ok(ok, `acme's console still says the database does not answer: ${last}`);
  },
);

/**
 * What the long outage below saw, for the tests after it: the right token refused (401) or
 * answered fail-closed (503 AUTH_UNAVAILABLE) once the tenant's hash was too old to check.
 */
const longOutage = { overrunMs: Number.NaN, staleRefusals: 0, staleUnavailable: 0 };
/** Answers to the right token a lockout counts (`FailureLimiter`'s 5 a minute). */
const LOCKOUT_AT = 5;

attack(
  "outage: the database stopped while a confirm waits: the console's decision is refused, agent keys get 503, no runtime starts, /api/status never says available, the call ends unapproved and its approval cannot be approved later",
  async () => {
    await adaRecovered();
    const posts = postsTo("/transfer");
    const { click, pending } = await raiseConfirm();
    const deadline = Date.parse(pending.expires_at);
    await pg.stop();
    const stoppedAt = Date.now();
    try {
      const r = await decide(A, pending.id, "approve");
      const body = await r.text();
      assert.equal(r.status, 503, body);
      assert.match(body, /UNAVAILABLE/);
      const s = await login(A).catch(() => undefined);
      if (s) {
        const form = await formPost(A, `/approvals/${pending.id}`, s, { decision: "approve" });
        await form.body?.cancel();
        assert.ok(
          form.status >= 500,
          `the console's form decided without a database: ${form.status}`,
        );
      }
      assert.equal(await mcpStatus(A, ada.key), 503, "the MCP door while keys cannot be read");
      await assert.rejects(() => runtimeOf("acme"), "a runtime started without its database");
      const result = await Promise.race([
        click.p,
        sleep(90_000).then(() => ({ text: "still waiting after 90 s", isError: true })),
      ]);
      longOutage.overrunMs = Date.now() - deadline;
      console.log(`  the waiting call ended ${longOutage.overrunMs} ms after its deadline`);
      assert.ok(!approved(result), result.text);
      assert.equal(postsTo("/transfer"), posts);
      // An operator's script polls the API through the outage, with the right token, until the
      // tenant's token hash is too old to check and the token got as many answers of a stale
      // hash as a lockout counts (refusals, or fail-closed 503s), or 12 s past the latest the
      // hash can turn stale.
      while (
        Date.now() - stoppedAt < ADMIN_STALE_MS + 12_000 &&
        longOutage.staleRefusals < LOCKOUT_AT && longOutage.staleUnavailable < LOCKOUT_AT
      ) {
        const st = await api(A, "/api/status");
        const text = await st.text();
        if (st.ok) {
          assert.equal(JSON.parse(text).storeAvailable, false, "status says available");
        } else {
          assert.ok([401, 503].includes(st.status), `${st.status} ${text}`);
          if (st.status === 401) longOutage.staleRefusals++;
          else if (/AUTH_UNAVAILABLE/.test(text)) longOutage.staleUnavailable++;
        }
        await sleep(1_000);
      }
    } finally {
      await pg.start();
    }
    assert.equal(postsTo("/transfer"), posts);
    await click.p;
    // The board's own decide (what every console's decision runs): the timed-out approval.
    const board = await PgDecisionStore.open(appDb, "acme", "approval", {
      runtime: "rt-acme-check",
    });
    try {
      let late = "";
      assert.ok(
        await eventually(async () => {
          late = await board.decide(pending.id, { state: "approved", by: "api" }).catch(() =>
            "unavailable"
          );
          return late !== "unavailable";
        }, 30_000),
        "the database came back",
      );
      assert.equal(late, "not_pending", "an approval whose call timed out was approved after it");
    } finally {
      await board[Symbol.asyncDispose]();
    }
  },
);

attack(
  "outage: a call waiting on a confirm ends within 5 s of its deadline while the database is down (not a pool backoff later)",
  () => {
    assert.ok(!Number.isNaN(longOutage.overrunMs), "the outage test ran");
    assert.ok(
      longOutage.overrunMs < 5_000,
      `the call ended ${longOutage.overrunMs} ms after its confirm deadline`,
    );
    return Promise.resolve();
  },
);

attack(
  "outage: the tenant's right admin token, refused or answered 503 while its hash could not be read, does not lock the operator out once the database is back",
  async () => {
    if (longOutage.staleRefusals === 0 && longOutage.staleUnavailable === 0) {
      console.log("  inconclusive: the right token's hash never turned stale during the outage");
      return;
    }
    const seen: number[] = [];
    const until = Date.now() + 25_000;
    // Every 2 s: a real operator's pace (each refusal would count again).
    while (Date.now() < until) {
      const s = await statusOf(api(A, "/api/status"));
      seen.push(s);
      if (s === 200 || s === 429) break; // answered, or locked out for the minute
      await sleep(2_000);
    }
    assert.equal(
      seen.at(-1),
      200,
      `after ${longOutage.staleRefusals} refusals and ${longOutage.staleUnavailable} 503s of ` +
        `the right token during the outage, acme's ` +
        `/api answered ${seen.join(",")} once the database was back`,
    );
  },
);

// ---------------------------------------------------------------------------------------

attack("shared store attacks: the runtimes stop and leave no browser", async () => {
  using _faults = faults;
  for (const c of clients.splice(0)) await c[Symbol.asyncDispose]().catch(() => {});
  await A[Symbol.asyncDispose]();
  await G[Symbol.asyncDispose]();
  await site[Symbol.asyncDispose]();
  await appDb[Symbol.asyncDispose]();
  await evil.end({ timeout: 5 });
  await su.end({ timeout: 5 });
  for (const d of dirs) await Deno.remove(d, { recursive: true }).catch(() => {});
});

Deno.test(clusterTeardown("shared store attacks", pg, owner));
