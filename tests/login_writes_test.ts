/**
 * "A login writes only its own request" (issue 19, class 4), end to end with real Chromium
 * through the real runtime: a login page whose script swaps the action, edits the entry
 * list, replays the submission by script or into a frame, or sends a copy beside it gets
 * nothing out under `read_only`, with no human asked; the plain form signs in. Every case
 * says what the site received (bodies by path) and checks that no tool result holds the
 * password.
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
import {
  type AttackName,
  type FormName,
  type HostileLoginSite,
  type HostileRequest,
  serveHostileLoginSite,
} from "./fixtures/hostile_login_site.ts";

const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const USER = "katherine.johnson@example.test";
const PASSWORD = "Wr1te-Planted-Pw-3b7e91";

/** One login attempt in a fresh session, and everything it left. */
interface Attempt {
  /** The browser_login result's text. */
  text: string;
  isError: boolean;
  /** The writes the site received during the attempt. */
  writes: HostileRequest[];
  /** The attempt's audit rows (its session's). */
  rows: {
    kind: string;
    source: string;
    origin: string;
    decision: string;
    reason: string;
    method: string;
  }[];
}

interface World extends AsyncDisposable {
  site: HostileLoginSite;
  /**
   * Opens a session for alice, shows `/login?attack=..&form=..`, runs browser_login, and
   * waits `settleMs` (default 500) for what the page sends after it before closing.
   */
  attempt(
    page: { attack?: AttackName; form?: FormName; origin?: string; settleMs?: number },
  ): Promise<Attempt>;
}

/**
 * The hostile login site, a runtime (vault open, standing grants for alice on the site's
 * 127.0.0.1 origin) under `policy` (both site origins allowed, plus `extra`).
 */
async function world(extra: (site: HostileLoginSite) => string): Promise<World> {
  const site = serveHostileLoginSite({ user: USER, password: PASSWORD });
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-login-writes-" });
  const db = openDatabase(databasePath(dataDir));
  {
    using vault = await Vault.open(db, rawKeySource(KEY));
    await vault.add("w-user", "username", USER);
    await vault.add("w-pass", "password", PASSWORD);
  }
  const grants = new Grants(new SqliteGrantStore(db), {
    audit: { append() {} },
    secrets: { has: (id) => Vault.has(db, id) },
  });
  for (const secret_id of ["w-user", "w-pass"]) {
    await grants.add({
      secret_id,
      agent: "alice",
      purpose: "login writes test",
      mode: "standing",
      expires: "1h",
      uses: [{ kind: "fill", allowed_origins: [site.origin] }],
    }, { approve: true });
  }
  db.close();
  const runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${site.origin}, ${site.otherOrigin}]\n${extra(site)}`,
    { vaultKey: { key: KEY } },
  );
  const { key } = await runtime.agents.add("alice");
  const outputs: string[] = [];
  return {
    site,
    async attempt({ attack = "none", form = "plain", origin = site.origin, settleMs = 500 }) {
      site.reset();
      const audit = new DatabaseSync(databasePath(dataDir), { readOnly: true });
      const before = Number(audit.prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM audit").get()!.n);
      audit.close();
      const client = new Client({ name: "login-writes-test", version: "0" });
      await client.connect(keyedTransport(runtime.url!, key));
      const c = new TestClient(client);
      let login;
      try {
        const nav = await c.call("browser_navigate", {
          url: `${origin}/login?attack=${attack}&form=${form}`,
        });
        assert.equal(nav.isError, false, nav.text);
        login = await c.call("browser_login");
        // A beacon or a keepalive fetch may still be on its way: let it arrive or be refused.
        await new Promise((r) => setTimeout(r, settleMs));
      } finally {
        await c[Symbol.asyncDispose]();
        outputs.push(...c.outputs);
      }
      assertNoPassword(c.outputs);
      const db = new DatabaseSync(databasePath(dataDir), { readOnly: true });
      const all = db.prepare(
        "SELECT session, kind, source, origin, decision, reason, method FROM audit WHERE seq > ?",
      ).all(before) as Record<string, string>[];
      db.close();
      const session = all.find((r) => r.kind === "login")?.session;
      assert.ok(session, "the login is audited");
      const rows = all.filter((r) => r.session === session).map((r) => ({
        kind: r.kind,
        source: r.source,
        origin: r.origin,
        decision: r.decision,
        reason: r.reason,
        method: r.method,
      }));
      return { text: login.text, isError: login.isError, writes: [...site.writes()], rows };
    },
    async [Symbol.asyncDispose]() {
      assertNoPassword(outputs);
      await runtime[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** Under `read_only`, logins may submit to the site's 127.0.0.1 origin only. */
const READ_ONLY_NAMED = (site: HostileLoginSite) =>
  `read_only: true\nlogin_submit_origins: [${site.origin}]\n`;

function assertNoPassword(texts: readonly string[]) {
  for (const form of secretForms(PASSWORD)) {
    for (const t of texts) assert.ok(!t.includes(form), "a form of the password is in a result");
  }
}

/** `method path` of each write. */
const paths = (a: Attempt) => a.writes.map((w) => `${w.method} ${w.path}${w.search}`);

/** The login's one POST: the form's own entries, as a top-level navigation. */
function assertOwnSubmission(w: HostileRequest, path = "/login") {
  assert.equal(`${w.method} ${w.path}${w.search}`, `POST ${path}`);
  assert.deepEqual(w.entries.map(([k]) => k), ["csrf", "user", "password"]);
  assert.deepEqual(w.entries.slice(1), [["user", USER], ["password", PASSWORD]]);
  assert.equal(w.dest, "document");
  assert.equal(w.mode, "navigate");
}

/** The plain form signs in: one POST with the expected entries. */
function assertSignedIn(a: Attempt, path = "/login") {
  assert.equal(a.isError, false, a.text);
  assert.match(a.text, /login: LOGIN_SUBMITTED/);
  assert.deepEqual(paths(a), [`POST ${path}`]);
  assertOwnSubmission(a.writes[0], path);
  const origin = new URL(a.writes[0].origin).origin;
  const posts = a.rows.filter((r) =>
    r.kind === "request" && r.method === "POST" && r.origin === origin
  );
  assert.deepEqual(
    posts.map((r) => `${r.source} ${r.decision} ${r.reason}`),
    ["proxy allow LOGIN_SUBMIT"],
  );
  assert.equal(a.rows.find((r) => r.kind === "login")?.reason, "LOGIN_SUBMITTED");
}

/** Refused with `code`, audited as a proxy request row, and the login says so. */
function assertRefused(a: Attempt, code = "LOGIN_WRITE_MISMATCH") {
  assert.equal(a.isError, true, a.text);
  assert.match(a.text, /LOGIN_WRITE_REFUSED/);
  // The agent's line names the mismatch code, or says in words that the origin is not named.
  assert.match(
    a.text,
    code === "LOGIN_ORIGIN_NOT_NAMED"
      ? /LOGIN_ORIGIN_NOT_NAMED|login_submit_origins does not name this origin/
      : new RegExp(code),
  );
  const denied = a.rows.filter((r) => r.kind === "request" && r.reason === code);
  assert.ok(denied.length >= 1, JSON.stringify(a.rows));
  for (const r of denied) {
    assert.equal(r.source, "proxy");
    assert.equal(r.decision, "deny");
  }
  const login = a.rows.find((r) => r.kind === "login");
  assert.equal(login?.reason, "LOGIN_WRITE_REFUSED");
}

Deno.test("read_only: a login page's script gets no write out beside or instead of the login's own", async (t) => {
  await using w = await world(READ_ONLY_NAMED);
  const { site } = w;

  await t.step("control: the plain form signs in with exactly its own POST", async () => {
    const a = await w.attempt({});
    assertSignedIn(a);
    assert.deepEqual(site.signIns.map((s) => s.path), ["/login"]);
  });

  await t.step("1. submit listener swaps the action to /steal", async () => {
    const a = await w.attempt({ attack: "action-steal" });
    assertRefused(a);
    assert.deepEqual(paths(a), [], "nothing reached /steal nor /login");
  });

  await t.step("2. formdata listener appends a copy of the password", async () => {
    const a = await w.attempt({ attack: "formdata-append" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("3. formdata listener changes the username", async () => {
    const a = await w.attempt({ attack: "formdata-user" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("4. submit cancelled, same bytes sent by fetch", async () => {
    const a = await w.attempt({ attack: "fetch-replay" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("5. submit cancelled, a copy posted into a hidden frame", async () => {
    const a = await w.attempt({ attack: "iframe-copy" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("5b. the form's own submission retargeted into a hidden frame", async () => {
    const a = await w.attempt({ attack: "target-frame" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("6. the password appended to the action's query at submit", async () => {
    const a = await w.attempt({ attack: "query" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  for (const attack of ["beacon", "fetch-other", "beacon-stall"] as const) {
    await t.step(`7. a ${attack} with the password beside the exact submission`, async () => {
      const a = await w.attempt({ attack });
      // The copy is refused; the login's own exact submission still goes (the hold admits
      // it whatever came first), and the login reports the refusal.
      assertRefused(a);
      assert.deepEqual(paths(a), ["POST /login"], "nothing reached /beacon or /other");
      assertOwnSubmission(a.writes[0]);
    });
  }

  await t.step("9a. the same bytes twice: the navigation and a fetch copy", async () => {
    const a = await w.attempt({ attack: "double-fetch" });
    assertRefused(a);
    assert.deepEqual(paths(a), ["POST /login"]);
    assertOwnSubmission(a.writes[0]);
  });

  await t.step("9b. the same bytes twice: the navigation and a frame copy", async () => {
    const a = await w.attempt({ attack: "double-frame" });
    assertRefused(a);
    assert.deepEqual(paths(a), ["POST /login"]);
    assertOwnSubmission(a.writes[0]);
  });

  await t.step("9c. the site's answer posts the same fields again at once", async () => {
    const a = await w.attempt({ attack: "resubmit" });
    assert.deepEqual(paths(a), ["POST /login"], "the second POST never reached the site");
    assertOwnSubmission(a.writes[0]);
    assertRefused(a);
  });

  for (const form of ["custom-element", "file"] as const) {
    await t.step(
      `9d. a form whose submission cannot be known (${form}) writes nothing`,
      async () => {
        const a = await w.attempt({ form });
        assertRefused(a);
        assert.deepEqual(paths(a), []);
      },
    );
  }

  await t.step("9d'. a write deferred after Enter is still the hold's, and refused", async () => {
    // The page cancels, hides its fields and posts a tampered copy 1.5 s later. The login
    // waits for its form's submission (a busy machine may be slow to send it), so the hold
    // is still open and refuses the copy; later still, read_only would.
    const a = await w.attempt({ attack: "deferred", settleMs: 3_000 });
    assertRefused(a);
    assert.deepEqual(paths(a), [], "nothing reached /steal");
    const late = a.rows.filter((r) =>
      r.kind === "request" && r.method === "POST" && r.origin === site.origin
    );
    assert.deepEqual(late.map((r) => `${r.source} ${r.decision} ${r.reason}`), [
      "proxy deny LOGIN_WRITE_MISMATCH",
    ]);
  });

  await t.step("9e. the default button's formaction (same origin) is the form's own", async () => {
    const a = await w.attempt({ form: "formaction-path" });
    assertSignedIn(a, "/login-alt");
    assert.deepEqual(site.signIns.map((s) => s.path), ["/login-alt"]);
  });

  await t.step("9f. the default button's formaction on another origin", async () => {
    const a = await w.attempt({ form: "formaction-origin" });
    assert.equal(a.isError, true);
    assert.match(a.text, /FILL_TARGET_REJECTED/);
    assert.deepEqual(paths(a), []);
    assert.equal(site.requestsCarrying(PASSWORD).length, 0);
  });
});

Deno.test("read_only: a login to an origin login_submit_origins does not name submits nothing", async (t) => {
  // Only the other origin is named; the grants are for 127.0.0.1.
  await using w = await world((site) =>
    `read_only: true\nlogin_submit_origins: [${site.otherOrigin}]\n`
  );
  await t.step("8. the plain form: LOGIN_ORIGIN_NOT_NAMED", async () => {
    const a = await w.attempt({});
    assertRefused(a, "LOGIN_ORIGIN_NOT_NAMED");
    assert.deepEqual(paths(a), []);
    assert.equal(w.site.signIns.length, 0);
  });
  await t.step(
    "8b. a same-origin formaction is checked against the named origins too",
    async () => {
      const a = await w.attempt({ form: "formaction-path" });
      assertRefused(a, "LOGIN_ORIGIN_NOT_NAMED");
      assert.deepEqual(paths(a), []);
    },
  );
});

Deno.test("writes allowed: the login's hold is strict all the same", async (t) => {
  await using w = await world(() => `read_only: false\n`);
  await t.step("control: the plain form signs in", async () => {
    assertSignedIn(await w.attempt({}));
  });
  for (const attack of ["action-steal", "formdata-append", "fetch-replay"] as const) {
    await t.step(`${attack}: refused though the policy allows writes`, async () => {
      const a = await w.attempt({ attack });
      assertRefused(a);
      assert.deepEqual(paths(a), []);
    });
  }
  await t.step("beacon: refused, the exact submission goes", async () => {
    const a = await w.attempt({ attack: "beacon" });
    assertRefused(a);
    assert.deepEqual(paths(a), ["POST /login"]);
  });
});

// Beyond class 4: a login page's script carrying the typed password to another allowed
// origin by a read (a GET navigation of the login form itself, an image) is refused by the
// egress check of guarded credentials (SECRET_IN_REQUEST), whoever sends it and when.
Deno.test({
  name:
    "browser_login: reads carrying the password to another allowed origin are refused (SECRET_IN_REQUEST)",
  async fn(t) {
    await using w = await world(READ_ONLY_NAMED);
    for (const attack of ["get-other", "image-other"] as const) {
      await t.step(attack, async () => {
        const a = await w.attempt({ attack });
        const there = w.site.requestsCarrying(PASSWORD).filter((r) =>
          r.origin === w.site.otherOrigin
        );
        assert.deepEqual(there.map((r) => `${r.method} ${r.path}`), []);
        // Refused by the login's hold while it is open, by the credential check after.
        assert.ok(
          a.rows.some((r) =>
            r.decision === "deny" &&
            (r.reason === "SECRET_IN_REQUEST" || r.reason === "LOGIN_WRITE_MISMATCH")
          ),
          "the refusal is audited",
        );
      });
    }
  },
});
