/**
 * Logins bound to tenants, against a compromised runtime: a login the owner bound to globex
 * sees and changes nothing of acme's, whatever `app.tenant_id` it names (rows, heads,
 * approvals, domain rules, audit appends, the definer functions); it works as before for its
 * own tenant; an unbound login keeps the earlier behaviour; no runtime reads or changes the
 * bindings; and after the migration no policy or function reads `app.tenant_id` directly.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { asTenant, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { pendingApproval } from "../../tests/helpers/approvals.ts";
import { PgDecisionStore } from "./pg_decision_store.ts";
import { PgAuditLog } from "./pg_audit_log.ts";
import { OmotaiError } from "../errors.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant, bindTenantLogin, tenantLogins } from "./pg_tenants.ts";
import { processRedactor } from "../redact/mod.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
await addTenant(owner, "acme");
await addTenant(owner, "globex");

/** A runtime login of its own, as docs/deploy.md makes one (`CREATE ROLE … IN ROLE`). */
async function login(name: string): Promise<string> {
  const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
  try {
    await su.unsafe(`CREATE ROLE ${name} LOGIN PASSWORD 'pw-${name}' IN ROLE omotai_runtime`);
  } finally {
    await su.end();
  }
  const url = new URL(pg.appUrl);
  url.username = name;
  url.password = `pw-${name}`;
  return url.href;
}

const ACME_URL = await login("omotai_acme_1");
const GLOBEX_URL = await login("omotai_globex_1");
await bindTenantLogin(owner, "acme", "omotai_acme_1");
await bindTenantLogin(owner, "globex", "omotai_globex_1");

Deno.test("tenant_logins migration: no policy and no function of the schema reads app.tenant_id but app_tenant()", async () => {
  const [p] = await owner.transaction((tx) =>
    tx`SELECT count(*)::int AS n FROM pg_policies WHERE schemaname = 'public'
      AND (qual LIKE '%app.tenant_id%' OR with_check LIKE '%app.tenant_id%')`
  );
  assert.equal(p.n, 0, "policies");
  const fns = await owner.transaction((tx) =>
    tx<{ proname: string }[]>`SELECT p.proname FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.prosrc LIKE '%current_setting(''app.tenant_id''%'
      ORDER BY 1`
  );
  // Reading it is app_tenant()'s alone; audit_append only names the tenant of its own
  // statement (set_config), which app_tenant() then checks against a bound login.
  assert.deepEqual(fns.map((f) => f.proname), ["app_tenant"]);
  const setters = await owner.transaction((tx) =>
    tx<{ proname: string }[]>`SELECT p.proname FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'public' AND p.prosrc LIKE '%app.tenant_id%'
        AND p.prosrc NOT LIKE '%current_setting(''app.tenant_id''%' ORDER BY 1`
  );
  assert.deepEqual(setters.map((f) => f.proname), ["audit_append"]);
  const [own] = await owner.transaction((tx) =>
    tx`SELECT count(*)::int AS n FROM pg_policies WHERE schemaname = 'public'
      AND qual LIKE '%app_tenant()%'`
  );
  assert.ok(own.n >= 10, `${own.n} policies read app_tenant()`);
});

Deno.test("bindTenantLogin: a login bound to globex acts for globex only, whatever tenant it names", async () => {
  // acme's runtime (its own bound login) posts an approval and writes its audit.
  await using acmeDb = await PgDatabase.open({ url: ACME_URL });
  await using acmeBoard = await PgDecisionStore.open(acmeDb, "acme", "approval", {
    runtime: "acme-rt",
  });
  const record = pendingApproval(60);
  await acmeBoard.post(record);
  const acmeAudit = new PgAuditLog(acmeDb, "acme", { redactor: processRedactor() });
  await acmeAudit.append([{ kind: "runtime_started", source: "lifecycle", decision: "event" }]);
  await acmeDb.tenant("acme", (tx) => tx`SELECT domain_set('https://acme.test', 'allow')`);

  // globex's login, compromised: it names acme in app.tenant_id.
  const sql = postgres(GLOBEX_URL, { max: 1, onnotice: () => {} });
  try {
    for (const t of ["approvals", "audit_events", "audit_heads", "domain_rules", "tenants"]) {
      const rows = await asTenant(sql, "acme", (tx) => tx.unsafe(`SELECT * FROM ${t}`));
      assert.equal(rows.length, 0, `${t} as acme`);
    }
    const won = await asTenant(
      sql,
      "acme",
      (tx) =>
        tx`UPDATE approvals SET state = 'approved', decided_at = now(), decided_by = 'x'
        WHERE id = ${record.id} RETURNING id`,
    );
    assert.equal(won.length, 0, "acme's approval is not globex's to decide");
    await assert.rejects(
      asTenant(sql, "acme", (tx) => tx`SELECT domain_set('https://evil.test', 'allow')`),
      /TENANT_UNSET|violates|permission|row-level/,
    );
    await assert.rejects(
      asTenant(sql, "acme", (tx) => tx`SELECT * FROM audit_lock_head()`).then((rows) => {
        if (rows.length === 0) throw new Error("no head: nothing to lock");
      }),
      /no head|permission|row-level/,
    );
    // Nor the bindings: no runtime reads or moves them.
    await assert.rejects(
      asTenant(sql, "globex", (tx) => tx`SELECT * FROM tenant_logins`),
      /permission denied/,
    );
    await assert.rejects(
      asTenant(
        sql,
        "globex",
        (tx) => tx`UPDATE tenant_logins SET tenant_id = 'acme' WHERE role = session_user`,
      ),
      /permission denied/,
    );
  } finally {
    await sql.end();
  }
  assert.equal((await acmeBoard.get(record.id))?.state, "pending", "still pending");
  // The same login works for its own tenant as before.
  await using globexDb = await PgDatabase.open({ url: GLOBEX_URL });
  const globexAudit = new PgAuditLog(globexDb, "globex", { redactor: processRedactor() });
  await globexAudit.append([{ kind: "runtime_started", source: "lifecycle", decision: "event" }]);
  assert.ok((await globexAudit.verify()).ok);
  // And as acme it can append nothing.
  await assert.rejects(
    new PgAuditLog(globexDb, "acme", { redactor: processRedactor() }).append([{
      kind: "forged",
      source: "lifecycle",
      decision: "event",
    }]),
    (e) => e instanceof OmotaiError && e.code === "AUDIT_UNAVAILABLE",
  );
  assert.deepEqual((await acmeAudit.rows()).map((r) => r.kind), ["runtime_started"]);
  assert.ok((await acmeAudit.verify()).ok);
});

Deno.test("bindTenantLogin: an unbound login keeps naming its tenant; unknown tenants and roles are refused; tenantLogins lists the bindings", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const acme = new PgAuditLog(app, "acme", { redactor: processRedactor() });
  const before = (await acme.rows()).length;
  await acme.append([{ kind: "unbound_login", source: "lifecycle", decision: "event" }]);
  assert.equal((await acme.rows()).length, before + 1);
  await assert.rejects(
    bindTenantLogin(owner, "nobody", "omotai_acme_1"),
    (e) => e instanceof OmotaiError && e.code === "BAD_TENANT",
  );
  await assert.rejects(
    bindTenantLogin(owner, "acme", "no_such_role"),
    (e) => e instanceof OmotaiError && e.code === "BAD_TENANT",
  );
  await assert.rejects(
    bindTenantLogin(owner, "acme", "bad-role; DROP"),
    (e) => e instanceof OmotaiError && e.code === "BAD_TENANT",
  );
  assert.deepEqual(await tenantLogins(owner), [
    { role: "omotai_acme_1", tenant: "acme" },
    { role: "omotai_globex_1", tenant: "globex" },
  ]);
});

Deno.test(clusterTeardown("tenant logins", pg, owner));
