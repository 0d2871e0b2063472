/**
 * browser_login end to end: grants redeemed for the page's origin, values typed by the
 * runtime through CDP, taint, status-only snapshots, and a search of every output for the
 * planted values.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DatabaseSync } from "node:sqlite";
import { rawKeySource, Vault } from "../vault/mod.ts";
import { Grants } from "../runtime/grants/mod.ts";
import { SqliteGrantStore } from "../runtime/store/sqlite_grant_store.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { secretForms } from "../runtime/redact/mod.ts";
import { keyedTransport, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { tempDir } from "./helpers/temp_dir.ts";
import { serveLoginSite } from "./fixtures/login_site.ts";

const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const USER = "ada.lovelace@example.test";
const PASSWORD = "Pl4nted-Passw0rd-7f3a9c";

interface Setup extends AsyncDisposable {
  site: ReturnType<typeof serveLoginSite>;
  dataDir: string;
  grant(
    opts: { agent: string; origin?: string; mode?: string; expires?: string },
  ): Promise<string[]>;
}

async function setup(totp = false): Promise<Setup> {
  const site = serveLoginSite({ user: USER, password: PASSWORD });
  const dir = await tempDir("omotai-login-");
  const dataDir = dir.path;
  const db = openDatabase(databasePath(dataDir));
  {
    using vault = await Vault.open(db, rawKeySource(KEY));
    await vault.add("site-user", "username", USER);
    await vault.add("site-pass", "password", PASSWORD);
    if (totp) await vault.add("site-totp", "totp", site.totpUri);
  }
  const grants = new Grants(new SqliteGrantStore(db), {
    audit: { append() {} },
    secrets: { has: (id) => Vault.has(db, id) },
  });
  return {
    site,
    dataDir,
    // The data dir goes last, once its runtime and browser are gone.
    [Symbol.asyncDispose]: () => dir[Symbol.asyncDispose](),
    async grant({ agent, origin = site.origin, mode = "session", expires = "1h" }) {
      const ids: string[] = [];
      for (const secret_id of ["site-user", "site-pass", ...(totp ? ["site-totp"] : [])]) {
        const { id } = await grants.add({
          secret_id,
          agent,
          purpose: "test login",
          mode,
          expires,
          uses: [{ kind: "fill", allowed_origins: [origin] }],
        }, { approve: true });
        ids.push(id);
      }
      return ids;
    },
  };
}

function policy(s: Setup, extra = ""): string {
  return `allowed_origins:\n  - ${s.site.origin}\n  - ${s.site.otherOrigin}\n${extra}`;
}

const keys = new Map<string, string>();

async function connect(runtime: Awaited<ReturnType<typeof startTestRuntime>>, agent: string) {
  const client = new Client({ name: "login-test", version: "0" });
  const id = `${runtime.url}|${agent}`;
  const key = keys.get(id) ?? (await runtime.agents.add(agent)).key;
  keys.set(id, key);
  await client.connect(keyedTransport(runtime.url!, key));
  return new TestClient(client);
}

/**
 * A login site and one runtime (the vault open) for the cases that sign in under the default
 * policy. Each case is its own agent with grants of its own (an agent another case granted or
 * used cannot be it), in sessions of its own (each its own browser and fresh profile), and
 * starts with the site's records cleared and the audit's end marked, so what a case asserts
 * is what it did.
 */
async function aliceWorld() {
  const s = await setup();
  const runtime = await startTestRuntime(s.dataDir, policy(s), { vaultKey: { key: KEY } });
  let cases = 0;
  return {
    s,
    runtime,
    /**
     * A fresh agent with its own grants (`mode`), connected; the site has seen nothing and
     * `since` is the audit's last row before the case.
     */
    async alice(opts: { mode?: string } = {}) {
      const agent = `alice-${++cases}`;
      s.site.received.length = 0;
      s.site.signIns.length = 0;
      const db = new DatabaseSync(databasePath(s.dataDir), { readOnly: true });
      const since = Number(
        db.prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM audit").get()!.n,
      );
      db.close();
      await s.grant({ agent, mode: opts.mode });
      return { agent, since, c: await connect(runtime, agent) };
    },
    async [Symbol.asyncDispose]() {
      await runtime[Symbol.asyncDispose]();
      await s.site[Symbol.asyncDispose]();
      await s[Symbol.asyncDispose]();
    },
  };
}

/** Every place a value could surface: the MCP stream, the audit rows, the database bytes. */
async function assertNoLeak(c: TestClient, dataDir: string, extra: string[] = []) {
  const forms = [...secretForms(PASSWORD), ...secretForms(USER).filter((f) => f.length > 6)];
  const db = new DatabaseSync(databasePath(dataDir), { readOnly: true });
  const rows = JSON.stringify(db.prepare("SELECT * FROM audit").all());
  db.close();
  const bytes = new TextDecoder("latin1").decode(await Deno.readFile(databasePath(dataDir)));
  const outputs = [...c.outputs, rows, ...extra];
  for (const form of forms) {
    for (const text of outputs) assert.ok(!text.includes(form), `a form of a secret leaked`);
    assert.ok(!bytes.includes(form), "a form of a secret is in the database file");
  }
}

Deno.test("browser_login under the default policy, each case its own agent on one runtime", async (t) => {
  await using w = await aliceWorld();
  const { s, runtime } = w;

  await t.step(
    "browser_login signs in with granted values, taints the session, and leaks nothing",
    async () => {
      const { c: client } = await w.alice();
      await using c = client;
      await c.call("browser_navigate", { url: `${s.site.origin}/login` });
      const login = await c.call("browser_login");
      assert.equal(login.isError, false, login.text);
      assert.match(login.text, /^login: LOGIN_SUBMITTED \(/);
      assert.match(login.text, /the session is tainted/);
      assert.deepEqual(s.site.signIns.map((x) => x.user), [USER]);
      // The values reached the site once, on the login POST of the granted origin only.
      const carrying = s.site.requestsCarrying(PASSWORD);
      assert.deepEqual(carrying.map((r) => `${r.origin} ${r.method} ${r.path}`), [
        `${s.site.origin} POST /login`,
      ]);
      // Taint: no more navigation or clicks; snapshots are status only.
      const nav = await c.call("browser_navigate", { url: `${s.site.origin}/` });
      assert.match(nav.text, /^denied: SESSION_TAINTED/);
      const snap = await c.call("browser_snapshot");
      assert.match(snap.text, /^\s*status only: this session is tainted \(login\)/);
      assert.doesNotMatch(snap.text, /Signed in as/);
      await assertNoLeak(c, s.dataDir);
    },
  );

  await t.step(
    "browser_login refuses a look-alike origin and another agent's grant, audited",
    async () => {
      const { agent, since, c: client } = await w.alice();
      await using c = client;
      // 127.0.0.2 serves the same login page: the grant names 127.0.0.1 only.
      await c.call("browser_navigate", { url: `${s.site.otherOrigin}/login` });
      const wrong = await c.call("browser_login");
      assert.equal(wrong.isError, true);
      assert.match(wrong.text, /GRANT_WRONG_ORIGIN/);
      // An agent no case granted anything.
      await using b = await connect(runtime, `bob-of-${agent}`);
      await b.call("browser_navigate", { url: `${s.site.origin}/login` });
      const other = await b.call("browser_login");
      assert.match(other.text, /GRANT_/);
      assert.equal(s.site.signIns.length, 0);
      // The model typing the stored password itself is refused, in any field.
      const typed = await b.call("browser_type", { ref: "e1", text: `x${PASSWORD}y` });
      assert.match(typed.text, /^denied: SECRET_VALUE/);
      assert.equal(s.site.requestsCarrying(PASSWORD).length, 0);
      const db = new DatabaseSync(databasePath(s.dataDir), { readOnly: true });
      // This case's rows only: no other case's refusal can stand for this one's.
      const refused = db.prepare(
        "SELECT reason FROM audit WHERE kind = 'grant_redeem' AND decision = 'deny' AND seq > ?",
      ).all(since).map((r) => String(r.reason));
      db.close();
      assert.ok(refused.includes("GRANT_WRONG_ORIGIN"), refused.join(","));
      await assertNoLeak(c, s.dataDir, b.outputs);
    },
  );

  await t.step(
    "browser_login fills nothing in a cross-origin frame and a once grant is used once",
    async () => {
      const { agent, c: client } = await w.alice({ mode: "once" });
      await using c = client;
      await c.call("browser_navigate", { url: `${s.site.origin}/login-iframe` });
      const framed = await c.call("browser_login");
      assert.match(framed.text, /NO_CREDENTIAL_FIELDS|FILL_TARGET_REJECTED/);
      assert.equal(s.site.requestsCarrying(PASSWORD).length, 0, "nothing typed into the frame");
      // The once grants were redeemed by that attempt: a second login (the same agent's) is refused.
      await using c2 = await connect(runtime, agent);
      await c2.call("browser_navigate", { url: `${s.site.origin}/login` });
      const again = await c2.call("browser_login");
      assert.match(again.text, /GRANT_USED/);
      await assertNoLeak(c, s.dataDir, c2.outputs);
    },
  );

  await t.step(
    "browser_login under taint_after_login: session shows an echoing page as status only",
    async () => {
      const { c: client } = await w.alice();
      await using c = client;
      const page = await c.call("browser_navigate", {
        url: `${s.site.origin}/login-leak?mode=reversed&hold=1`,
      });
      const button = /\[(e\d+)\] button "Sign in"/.exec(page.text)?.[1];
      assert.ok(button, page.text);
      await c.call("browser_login");
      const snap = await c.call("browser_snapshot");
      assert.match(snap.text, /^\s*status only/);
      assert.match(
        (await c.call("browser_click", { ref: button })).text,
        /^denied: SESSION_TAINTED/,
      );
      assert.match((await c.call("browser_tabs", { action: "list" })).text, /SESSION_TAINTED/);
      await assertNoLeak(c, s.dataDir);
    },
  );

  await t.step(
    "browser_login fills no username page whose only password field is an off-screen trap",
    async () => {
      const { c: client } = await w.alice();
      await using c = client;
      await c.call("browser_navigate", {
        url: `${s.site.origin}/login2/user?variant=hidden-password`,
      });
      const r = await c.call("browser_login");
      assert.match(r.text, /NO_CREDENTIAL_FIELDS/);
      assert.equal(s.site.requestsCarrying(PASSWORD).length, 0);
      assert.equal(s.site.requestsCarrying(USER).length, 0, "the username was not typed either");
      await assertNoLeak(c, s.dataDir);
    },
  );
});

Deno.test("browser_login: a page that echoes the password (plain, reversed) shows nothing of it", async () => {
  await using s = await setup();
  await using _site = s.site;
  const runtime = await startTestRuntime(
    s.dataDir,
    policy(s, "taint_after_login: none\n"),
    { vaultKey: { key: KEY } },
  );
  await using _rt = runtime;
  // One runtime; each mode its own agent, grants and session (its own browser).
  for (const mode of ["plain", "reversed"]) {
    await s.grant({ agent: `alice-${mode}` });
    await using c = await connect(runtime, `alice-${mode}`);
    await c.call("browser_navigate", {
      url: `${s.site.origin}/login-leak?mode=${mode}&hold=1`,
    });
    await c.call("browser_login");
    // Untainted by policy: the agent may look at the page, whose script wrote the value
    // into its text and its title.
    const snap = await c.call("browser_snapshot");
    assert.doesNotMatch(snap.text, /^status only/, mode);
    assert.match(snap.text, /\[redacted\]/, `${mode}: the echo is shown redacted`);
    const tabs = await c.call("browser_tabs", { action: "list" });
    assert.equal(tabs.isError, false, tabs.text);
    await assertNoLeak(c, s.dataDir);
  }
});

Deno.test("startup login: username, password and TOTP pages one after another, before the first call", async () => {
  await using s = await setup(true);
  await using _site = s.site;
  const login = [
    "login:",
    `  url: ${s.site.origin}/login2/user`,
    "  username_secret: site-user",
    "  password_secret: site-pass",
    "  totp_secret: site-totp",
    '  username_selector: "input[autocomplete=username]"',
  ].join("\n");
  const runtime = await startTestRuntime(s.dataDir, policy(s, `${login}\n`), {
    vaultKey: { key: KEY },
  });
  await using _rt = runtime;
  await using c = await connect(runtime, "alice");
  const first = await c.call("browser_snapshot");
  assert.match(first.text, new RegExp(`startup login on ${s.site.origin}: LOGIN_SUBMITTED`));
  assert.deepEqual(s.site.signIns.map((x) => `${x.flow} ${x.user}`), [`login2 ${USER}`]);
  // Untainted (the startup default): the agent browses the signed-in site.
  assert.match(first.text, /Signed in as/);
  const next = await c.call("browser_navigate", { url: `${s.site.origin}/account` });
  assert.doesNotMatch(next.text, /SESSION_TAINTED|startup login/);
  await assertNoLeak(c, s.dataDir);
});

Deno.test("startup login: a push challenge goes to the console; the agent sees a status only", async () => {
  await using s = await setup();
  await using _site = s.site;
  const login = [
    "login:",
    `  url: ${s.site.origin}/login-push`,
    "  username_secret: site-user",
    "  password_secret: site-pass",
    "  push:",
    "    vendor_selector: .push-vendor",
    "    number_selector: .push-number",
  ].join("\n");
  const runtime = await startTestRuntime(s.dataDir, policy(s, `${login}\n`), {
    vaultKey: { key: KEY },
  });
  await using _rt = runtime;
  await using c = await connect(runtime, "alice");
  const api = (path: string, init: RequestInit = {}) =>
    fetch(new URL(path, runtime.url), {
      ...init,
      headers: {
        Authorization: `Bearer ${runtime.adminToken}`,
        "Content-Type": "application/json",
      },
    });
  const operator = (async () => {
    const challenge = await s.site.waitForPush(20_000);
    for (let i = 0; i < 200; i++) {
      const open = await (await api("/api/questions")).json() as {
        id: string;
        question: string;
        state: string;
      }[];
      const q = open.find((x) => x.state === "pending" && x.question.includes("Login push"));
      if (q) {
        assert.match(
          q.question,
          new RegExp(`${challenge.vendor} shows the number ${challenge.number}`),
        );
        s.site.approvePush(challenge.number);
        const r = await api(`/api/questions/${q.id}`, {
          method: "POST",
          body: JSON.stringify({ answer: "approved" }),
        });
        assert.equal(r.status, 200, await r.text());
        return challenge.number;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error("no push question on the console");
  })();
  const first = await c.call("browser_snapshot");
  const number = await operator;
  assert.match(first.text, new RegExp(`startup login on ${s.site.origin}: LOGIN_SUBMITTED`));
  assert.deepEqual(s.site.signIns.map((x) => x.flow), ["push"]);
  assert.doesNotMatch(first.text.split("<<<untrusted-page")[0], new RegExp(`\\b${number}\\b`));
  await assertNoLeak(c, s.dataDir);
});
