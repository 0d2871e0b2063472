/**
 * A login across runtimes of one tenant on the shared store: a secret sealed into the
 * tenant's vault in PostgreSQL, a grant added and approved through runtime B's API, redeemed
 * by an agent on runtime A, whose browser signs in with values nobody but the runtime saw. A
 * `once` grant raced by agents on both runtimes is used by exactly one. Every output and every
 * row the database holds is searched for the planted values.
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import assert from "node:assert/strict";
import { PgAgentStore } from "../runtime/store/pg_agent_store.ts";
import type { Runtime } from "../runtime/cli/start.ts";
import { secretForms } from "../runtime/redact/mod.ts";
import { rotateAdminToken } from "../runtime/store/pg_admin_token.ts";
import { PgDatabase } from "../runtime/store/pg_database.ts";
import { addTenant } from "../runtime/store/pg_tenants.ts";
import { PgVaultRecords } from "../runtime/store/pg_vault_records.ts";
import { rawKeySource, Vault } from "../vault/mod.ts";
import { serveLoginSite } from "./fixtures/login_site.ts";
import { keyedTransport, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { clusterTeardown, startPostgres } from "./helpers/postgres.ts";

const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const USER = "grace.hopper@example.test";
const PASSWORD = "Sh4red-Vault-Passw0rd-91c2";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
await addTenant(owner, "acme");
const TOKEN = await rotateAdminToken(owner, "acme");

/** A runtime of tenant acme, in this process, with the tenant's vault key. */
async function runtimeOf(policy: string): Promise<Runtime & { dataDir: string }> {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-shared-login-" });
  const runtime = await startTestRuntime(dataDir, policy, {
    database: pg.appUrl,
    tenant: "acme",
    vaultKey: { key: KEY },
    isolation: { mode: "off" },
  });
  return Object.assign(runtime, { dataDir });
}

async function connect(runtime: Runtime, key: string): Promise<TestClient> {
  const client = new Client({ name: "shared-login-test", version: "0" });
  await client.connect(keyedTransport(runtime.url!, key));
  return new TestClient(client);
}

Deno.test("shared store: a grant approved on runtime B is redeemed by a login on runtime A; a once grant raced on both is used once; no value anywhere", async () => {
  const site = serveLoginSite({ user: USER, password: PASSWORD });
  const policy = `allowed_origins:\n  - ${site.origin}\n`;
  // The operator seals the values into the tenant's vault (as `omotai secret add` would).
  {
    await using db = await PgDatabase.open({ url: pg.appUrl });
    using vault = await Vault.open(new PgVaultRecords(db, "acme"), rawKeySource(KEY));
    await vault.add("site-user", "username", USER);
    await vault.add("site-pass", "password", PASSWORD);
  }
  const agents = new PgAgentStore(owner, "acme");
  const alice = await agents.add("alice");
  const bob = await agents.add("bob");
  const a = await runtimeOf(policy);
  const b = await runtimeOf(policy);
  const clients: TestClient[] = [];
  try {
    const grant = async (agent: string, mode: string) => {
      for (const secret_id of ["site-user", "site-pass"]) {
        const r = await fetch(`${b.url}/api/grants`, {
          method: "POST",
          headers: { Authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: JSON.stringify({
            secret_id,
            agent,
            purpose: "shared login test",
            mode,
            expires: "1h",
            uses: [{ kind: "fill", allowed_origins: [site.origin] }],
            approve: true,
          }),
        });
        assert.equal(r.status, 201, await r.text());
      }
    };
    await grant("alice", "session");
    const ca = await connect(a, alice.key);
    clients.push(ca);
    await ca.call("browser_navigate", { url: `${site.origin}/login` });
    const login = await ca.call("browser_login");
    assert.equal(login.isError, false, login.text);
    assert.match(login.text, /^login: LOGIN_SUBMITTED/);
    assert.deepEqual(site.signIns.map((s) => s.user), [USER], "signed in once, on A");

    // A once grant for bob, raced by bob's sessions on A and on B.
    await grant("bob", "once");
    const ba = await connect(a, bob.key);
    const bb = await connect(b, bob.key);
    clients.push(ba, bb);
    await ba.call("browser_navigate", { url: `${site.origin}/login` });
    await bb.call("browser_navigate", { url: `${site.origin}/login` });
    const [ra, rb] = await Promise.all([ba.call("browser_login"), bb.call("browser_login")]);
    const won = [ra, rb].filter((r) => !r.isError);
    assert.equal(won.length, 1, `${ra.text}\n${rb.text}`);
    assert.match([ra, rb].find((r) => r.isError)!.text, /GRANT_USED|GRANT_/);
    assert.equal(site.signIns.length, 2, "bob signed in once");

    // The planted values: in no tool output, and in no row of any table of the database.
    const forms = [...secretForms(PASSWORD), ...secretForms(USER).filter((f) => f.length > 6)];
    const tables = await owner.transaction(async (tx) => {
      const out: string[] = [];
      for (
        const t of ["audit_events", "grants", "vault_secrets", "vault_meta", "approvals"]
      ) {
        out.push(JSON.stringify(await tx.unsafe(`SELECT * FROM ${t}`)));
      }
      return out;
    });
    for (const form of forms) {
      for (const text of [...clients.flatMap((c) => c.outputs), ...tables]) {
        assert.ok(!text.includes(form), "a form of a secret leaked");
      }
    }
  } finally {
    for (const c of clients) await c[Symbol.asyncDispose]().catch(() => {});
    for (const rt of [a, b]) {
      await rt[Symbol.asyncDispose]();
      await Deno.remove(rt.dataDir, { recursive: true }).catch(() => {});
    }
    await site[Symbol.asyncDispose]();
  }
});

Deno.test(clusterTeardown("shared login", pg, owner));
