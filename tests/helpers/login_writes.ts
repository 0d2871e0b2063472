/**
 * The world of the "a login writes only its own request" tests (tests/login_writes_test.ts,
 * tests/login_writes_hold_test.ts): the hostile login site, a runtime with alice's grants
 * for it, one login attempt per fresh session (or all in one session) with everything it
 * left, and the assertions on what the site received.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DatabaseSync } from "node:sqlite";
import { rawKeySource, Vault } from "../../vault/mod.ts";
import { Grants } from "../../runtime/grants/mod.ts";
import { SqliteGrantStore } from "../../runtime/store/sqlite_grant_store.ts";
import { databasePath, openDatabase } from "../../runtime/store/database.ts";
import { secretForms } from "../../runtime/redact/mod.ts";
import { keyedTransport, startTestRuntime, TestClient } from "./harness.ts";
import {
  type AttackName,
  type FormName,
  type HostileLoginSite,
  type HostileRequest,
  serveHostileLoginSite,
} from "../fixtures/hostile_login_site.ts";

const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
/** The login's user name (in the vault as `w-user`). */
export const USER = "katherine.johnson@example.test";
/** The login's password (in the vault as `w-pass`): never in any tool result. */
export const PASSWORD = "Wr1te-Planted-Pw-3b7e91";

/** One login attempt in a fresh session, and everything it left. */
export interface Attempt {
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

export interface World extends AsyncDisposable {
  site: HostileLoginSite;
  /**
   * Opens a session for alice (or, with {@link WorldOptions.sharedSession}, takes the world's
   * one session to a blank page of the site), shows `/login?attack=..&form=..`, runs
   * browser_login, and waits `settleMs` (default 500) for what the page sends after it before
   * closing (or leaving) it.
   */
  attempt(
    page: { attack?: AttackName; form?: FormName; origin?: string; settleMs?: number },
  ): Promise<Attempt>;
}

/** How a {@link world} runs its attempts. */
export interface WorldOptions {
  /**
   * Every attempt in one agent session (one browser) instead of a fresh one each (default
   * false): for cases that do not test isolation from each other. The policy then says
   * `taint_after_login: none`, or the session would run no navigation after its first login:
   * the taint only gates the session's tools and snapshots (runtime/tools/login.ts), never the
   * login's write hold nor the proxy (the hold under the default taint is what fresh-session
   * worlds, e.g. tests/login_writes_hold_test.ts, run). A login's hold opens and
   * closes inside its own call, so nothing of it outlives the attempt; each attempt first
   * takes the tab to a blank page of the site (the last page and its scripts are gone before
   * the site's record is cleared), and its audit rows are those after that. Callers end with
   * a plain login that must still sign in, so a session left refusing everything shows.
   */
  sharedSession?: boolean;
}

/**
 * The hostile login site, a runtime (vault open, standing grants for alice on the site's
 * 127.0.0.1 origin) under `policy` (both site origins allowed, plus `extra`).
 */
export async function world(
  extra: (site: HostileLoginSite) => string,
  options: WorldOptions = {},
): Promise<World> {
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
    `allowed_origins: [${site.origin}, ${site.otherOrigin}]\n${extra(site)}` +
      (options.sharedSession ? "taint_after_login: none\n" : ""),
    { vaultKey: { key: KEY } },
  );
  const { key } = await runtime.agents.add("alice");
  const outputs: string[] = [];
  const connect = async () => {
    const client = new Client({ name: "login-writes-test", version: "0" });
    await client.connect(keyedTransport(runtime.url!, key));
    return new TestClient(client);
  };
  /** The one session of every attempt, with `sharedSession`. */
  const shared = options.sharedSession ? await connect() : undefined;
  return {
    site,
    async attempt({ attack = "none", form = "plain", origin = site.origin, settleMs = 500 }) {
      if (shared) {
        // The last attempt's page (and every script on it) is gone before the record clears.
        const blank = await shared.call("browser_navigate", { url: `${site.origin}/sink` });
        assert.equal(blank.isError, false, blank.text);
      }
      site.reset();
      const audit = new DatabaseSync(databasePath(dataDir), { readOnly: true });
      const before = Number(audit.prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM audit").get()!.n);
      audit.close();
      const c = shared ?? await connect();
      const seen = c.outputs.length;
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
        if (!shared) {
          await c[Symbol.asyncDispose]();
          outputs.push(...c.outputs);
        }
      }
      assertNoPassword(c.outputs.slice(seen));
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
      if (shared) {
        await shared[Symbol.asyncDispose]().catch(() => {});
        outputs.push(...shared.outputs);
      }
      assertNoPassword(outputs);
      await runtime[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** Under `read_only`, logins may submit to the site's 127.0.0.1 origin only. */
export const READ_ONLY_NAMED = (site: HostileLoginSite): string =>
  `read_only: true\nlogin_submit_origins: [${site.origin}]\n`;

/** No form of the password in any of `texts`. */
export function assertNoPassword(texts: readonly string[]): void {
  for (const form of secretForms(PASSWORD)) {
    for (const t of texts) assert.ok(!t.includes(form), "a form of the password is in a result");
  }
}

/** `method path` of each write. */
export const paths = (a: Attempt): string[] =>
  a.writes.map((w) => `${w.method} ${w.path}${w.search}`);

/** The login's one POST: the form's own entries, as a top-level navigation. */
export function assertOwnSubmission(w: HostileRequest, path = "/login"): void {
  assert.equal(`${w.method} ${w.path}${w.search}`, `POST ${path}`);
  assert.deepEqual(w.entries.map(([k]) => k), ["csrf", "user", "password"]);
  assert.deepEqual(w.entries.slice(1), [["user", USER], ["password", PASSWORD]]);
  assert.equal(w.dest, "document");
  assert.equal(w.mode, "navigate");
}

/** The plain form signs in: one POST with the expected entries. */
export function assertSignedIn(a: Attempt, path = "/login"): void {
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
export function assertRefused(a: Attempt, code = "LOGIN_WRITE_MISMATCH"): void {
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
