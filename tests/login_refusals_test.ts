/** A wrong vault key stops the start; an expired grant signs nothing in. */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { rawKeySource, Vault, VaultError } from "../vault/mod.ts";
import { Grants } from "../runtime/grants/mod.ts";
import { SqliteGrantStore } from "../runtime/store/sqlite_grant_store.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { keyedTransport, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { tempDir } from "./helpers/temp_dir.ts";
import { serveLoginSite } from "./fixtures/login_site.ts";

const key = () => btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const USER = "alan.turing@example.test";
const PASSWORD = "Refusal-Planted-Pw-5e8d";

Deno.test("startRuntime() with a wrong vault key fails at once with VAULT_KEY_MISMATCH", async () => {
  await using dir = await tempDir("omotai-wrongkey-");
  const dataDir = dir.path;
  const db = openDatabase(databasePath(dataDir));
  {
    using vault = await Vault.open(db, rawKeySource(key()));
    await vault.add("p", "password", PASSWORD);
  }
  db.close();
  const err = await startTestRuntime(dataDir, "allowed_origins: []\n", {
    vaultKey: { key: key() },
  }).then(() => undefined, (e) => e);
  assert.ok(err instanceof VaultError, String(err));
  assert.equal(err.code, "VAULT_KEY_MISMATCH");
  assert.ok(!String(err.message).includes(PASSWORD));
});

Deno.test("browser_login with an expired grant is refused, audited, and types nothing", async () => {
  await using site = serveLoginSite({ user: USER, password: PASSWORD });
  await using dir = await tempDir("omotai-expired-");
  const dataDir = dir.path;
  const k = key();
  const db = openDatabase(databasePath(dataDir));
  {
    using vault = await Vault.open(db, rawKeySource(k));
    await vault.add("u", "username", USER);
    await vault.add("p", "password", PASSWORD);
  }
  // Granted two hours ago for one hour.
  const past = new Grants(new SqliteGrantStore(db), {
    audit: { append() {} },
    secrets: { has: (id) => Vault.has(db, id) },
    now: () => Date.now() - 7_200_000,
  });
  for (const secret_id of ["u", "p"]) {
    await past.add({
      secret_id,
      agent: "dora",
      purpose: "expired",
      mode: "standing",
      expires: "1h",
      uses: [{ kind: "fill", allowed_origins: [site.origin] }],
    }, { approve: true });
  }
  const runtime = await startTestRuntime(dataDir, `allowed_origins: [${site.origin}]\n`, {
    vaultKey: { key: k },
  });
  await using _rt = runtime;
  const client = new Client({ name: "expired-test", version: "0" });
  await client.connect(keyedTransport(runtime.url!, (await runtime.agents.add("dora")).key));
  await using c = new TestClient(client);
  await c.call("browser_navigate", { url: `${site.origin}/login` });
  const r = await c.call("browser_login");
  assert.equal(r.isError, true);
  assert.match(r.text, /GRANT_EXPIRED/);
  assert.equal(site.requestsCarrying(PASSWORD).length, 0);
  const reasons = db.prepare("SELECT reason FROM audit WHERE kind = 'grant_redeem'").all()
    .map((row) => String(row.reason));
  assert.ok(reasons.includes("GRANT_EXPIRED"), reasons.join(","));
  for (const t of c.outputs) assert.ok(!t.includes(PASSWORD) && !t.includes(USER));
  db.close();
});
