/**
 * Tenant admin tokens in a real PostgreSQL: set by the owner and kept as a hash; a runtime of
 * the tenant accepts exactly that token, follows a rotation, refuses every bearer once the
 * hash went unread too long; the runtime's role can neither read another tenant's hash nor
 * write any.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import {
  assertRefused,
  asTenant,
  clusterTeardown,
  startPostgres,
} from "../../tests/helpers/postgres.ts";
import { OmotaiError } from "../errors.ts";
import { ADMIN_STALE_MS, PgAdminToken, rotateAdminToken } from "./pg_admin_token.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
await addTenant(owner, "acme");
await addTenant(owner, "globex");
await addTenant(owner, "initech");

Deno.test("PgAdminToken: the tenant's token and nothing else; a rotation reaches the runtime at its next read; another tenant's token opens nothing", async () => {
  const acme = await rotateAdminToken(owner, "acme");
  const globex = await rotateAdminToken(owner, "globex");
  assert.notEqual(acme, globex);
  await using db = await PgDatabase.open({ url: pg.appUrl });
  await using check = await PgAdminToken.open(db, "acme");
  assert.equal(check.verify(acme), true);
  assert.equal(check.verify(globex), false, "globex's token");
  assert.equal(check.verify(""), false);
  assert.equal(check.verify(acme + " "), false);
  const next = await rotateAdminToken(owner, "acme");
  assert.equal(check.verify(acme), true, "until the next read");
  await check.refresh();
  assert.equal(check.verify(acme), false, "the old token, once read again");
  assert.equal(check.verify(next), true);
  // Only the hash is kept.
  const stored = await owner.tenant("acme", (tx) => tx`SELECT token_hash FROM tenant_admins`);
  assert.ok(!JSON.stringify(stored).includes(next));
});

Deno.test("PgAdminToken.open: a tenant without a token starts no console (ADMIN_TOKEN_UNSET); an unknown tenant gets none (TENANT_UNKNOWN)", async () => {
  await using db = await PgDatabase.open({ url: pg.appUrl });
  await assert.rejects(
    PgAdminToken.open(db, "initech"),
    (e) => e instanceof OmotaiError && e.code === "ADMIN_TOKEN_UNSET",
  );
  await assert.rejects(
    rotateAdminToken(owner, "nobody"),
    (e) => e instanceof OmotaiError && e.code === "TENANT_UNKNOWN",
  );
});

Deno.test("PgAdminToken.verify: once the hash went unread too long (the database gone), every bearer is refused as unavailable, not as wrong", async () => {
  const token = await rotateAdminToken(owner, "acme");
  let now = Date.now();
  await using db = await PgDatabase.open({ url: pg.appUrl });
  await using check = await PgAdminToken.open(db, "acme", { now: () => now });
  assert.equal(check.verify(token), true);
  now += ADMIN_STALE_MS + 1;
  assert.throws(
    () => check.verify(token),
    (e) => e instanceof OmotaiError && e.code === "ADMIN_TOKEN_UNAVAILABLE",
    "stale: fail closed",
  );
  await check.refresh();
  assert.equal(check.verify(token), true, "read again");
});

Deno.test("tenant_admins as the runtime's role: no other tenant's hash, no tenant's hash without a tenant, and no write at all", async () => {
  await rotateAdminToken(owner, "acme");
  await rotateAdminToken(owner, "globex");
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    const seen = await asTenant(sql, "globex", (tx) => tx`SELECT tenant_id FROM tenant_admins`);
    assert.deepEqual(seen.map((r) => r.tenant_id), ["globex"]);
    assert.equal((await asTenant(sql, null, (tx) => tx`SELECT 1 FROM tenant_admins`)).length, 0);
    const hash = "0".repeat(64);
    await assertRefused(sql, "acme", [
      `UPDATE tenant_admins SET token_hash = '${hash}' WHERE tenant_id = 'acme'`,
      `INSERT INTO tenant_admins (tenant_id, token_hash) VALUES ('acme', '${hash}')`,
      `DELETE FROM tenant_admins WHERE tenant_id = 'acme'`,
    ], /permission denied/);
  } finally {
    await sql.end();
  }
});

Deno.test(clusterTeardown("PgAdminToken tests", pg, owner));
