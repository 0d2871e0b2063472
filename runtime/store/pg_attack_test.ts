/**
 * An attacker's pass over the PostgreSQL schema (runtime/store/pg_migrations.ts): the runtime's
 * role (`omotai_app`, member of `omotai_runtime`) on a raw connection, sending any SQL it
 * likes. Every test asserts the SECURE behaviour: it passes when the attack fails.
 *
 * The pass found eight weaknesses; each is fixed in the migrations (or, for what one login
 * shared by every runtime allows, by a login per runtime: docs/deploy.md) and its attack is
 * kept here as a test.
 *
 * Setting `app.tenant_id` to another tenant is possible (set_config is unprivileged) and is
 * not itself treated as a finding here: per-tenant roles are the documented next step. What
 * is attacked is everything else: reads/writes past RLS without naming the tenant, the
 * append-only audit, prune's retention, approvals' finality, agent keys, SECURITY DEFINER
 * functions, LISTEN/NOTIFY, DDL, and denial of service against other tenants.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { Redactor } from "../redact/mod.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";
import { asTenant, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { pendingApproval } from "../../tests/helpers/approvals.ts";
import { PgAuditLog, tenantGenesis } from "./pg_audit_log.ts";
import type { AuditEvent } from "./audit_row.ts";
import { PgAgentStore } from "./pg_agent_store.ts";
import { agentKeyHash } from "./agent_store.ts";
import { PgDecisionStore } from "./pg_decision_store.ts";
import { ApprovalBoard } from "../approvals/approval_board.ts";
import { MemorySink } from "../../tests/helpers/memory_sink.ts";
import { pending as heldClick } from "../../tests/helpers/pending_approval.ts";
import { until } from "../../tests/helpers/until.ts";
import { PgCaptureLeaseRows } from "./pg_capture_leases.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
for (const t of ["acme", "globex"]) await addTenant(owner, t);

const EVENT: AuditEvent = {
  kind: "navigate",
  source: "action",
  agent: "ada",
  origin: "https://a.test/x",
  decision: "allow",
  reason: "OK",
};

const pending = (seconds = 600) => pendingApproval(seconds);

// Seed both tenants honestly, through the runtime's own classes.
const seedDb = await PgDatabase.open({ url: pg.appUrl });
const seed = {
  acme: new PgAuditLog(seedDb, "acme", { redactor: new Redactor() }),
  globex: new PgAuditLog(seedDb, "globex", { redactor: new Redactor() }),
};
await seed.acme.append([EVENT]);
await seed.globex.append([EVENT, EVENT]);
const acmeAgent = await new PgAgentStore(seedDb, "acme").add("ada");
const globexAgent = await new PgAgentStore(seedDb, "globex").add("gina");
const globexKeyHash = agentKeyHash(globexAgent.key);
const acmeKeyHash = agentKeyHash(acmeAgent.key);
const globexApproval = pending();
const globexDecided = pending();
{
  const b = await PgDecisionStore.open(seedDb, "globex", "approval", { runtime: "rt-g" });
  await b.post(globexApproval);
  await b.post(globexDecided);
  await b.decide(globexDecided.id, { state: "denied", by: "console" });
  await b[Symbol.asyncDispose]();
}
await seedDb.tenant(
  "globex",
  (tx) =>
    tx`INSERT INTO audit_checkpoints (tenant_id, seq, hash, ts, runtime, key_id, sig)
    VALUES ('globex', 2, 'h', '2025-01-01T00:00:00.000Z', 'rt-g', 'k', 's')`,
);
// A capture of globex holds a lease on one of its targets.
const GLOBEX_LEASE_TOKEN = crypto.randomUUID();
assert.deepEqual(
  await new PgCaptureLeaseRows(seedDb, "globex").take(
    ["gh.pem"],
    GLOBEX_LEASE_TOKEN,
    "session g on rt-g",
    600_000,
  ),
  { taken: true },
);
await seedDb[Symbol.asyncDispose]();

const TABLES = [
  "tenants",
  "audit_events",
  "audit_heads",
  "audit_retention",
  "audit_checkpoints",
  "agents",
  "approvals",
  "live_sessions",
  "domain_rules",
  "questions",
  "tenant_admins",
  "grants",
  "vault_meta",
  "vault_secrets",
  // Not here: the tables of FUNCTION_ONLY, on which the runtime's role has no privilege.
];

/** Tables the runtime's role reaches only through SECURITY DEFINER functions. */
const FUNCTION_ONLY = [
  // Four functions; runtime/store/pg_operator_sessions_test.ts attacks them.
  "operator_sessions",
  // Three functions; attacked below.
  "capture_leases",
];

/** A raw connection as the runtime's role: what a compromised runtime has. */
function rawApp(): postgres.Sql {
  return postgres(pg.appUrl, { max: 1, onnotice: () => {} });
}

const as = asTenant;

async function globexState() {
  return await owner.transaction(async (tx) => {
    const [a] = await tx`SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = 'globex'`;
    const [h] = await tx`SELECT head_seq::int, head_hash, anchor_seq::int, anchor_hash
      FROM audit_heads WHERE tenant_id = 'globex'`;
    const [ag] = await tx`SELECT count(*)::int AS n FROM agents WHERE tenant_id = 'globex'`;
    const ap = await tx`SELECT id, state, request, agent, kind FROM approvals
      WHERE tenant_id = 'globex' AND id IN ${tx([globexApproval.id, globexDecided.id])}
      ORDER BY id`;
    const [c] =
      await tx`SELECT count(*)::int AS n FROM audit_checkpoints WHERE tenant_id = 'globex'`;
    const [r] = await tx`SELECT days FROM audit_retention WHERE tenant_id = 'globex'`;
    return { rows: a.n, head: h, agents: ag.n, approvals: ap, checkpoints: c.n, days: r.days };
  });
}
const GLOBEX_BEFORE = await globexState();

const refused =
  /permission denied|must be (the )?owner|must be superuser|row-level security|not allowed|cannot|only superusers|must have|APPEND_ONLY|APPROVAL_FINAL|TENANT_UNSET/i;

// ---------------------------------------------------------------------------------------------
// (a) reads and writes past RLS, without naming the tenant

Deno.test("(a) no tenant / own tenant: no other tenant's row is visible in any table", async () => {
  const sql = rawApp();
  try {
    for (const t of TABLES) {
      const [{ n }] = await sql.unsafe(`SELECT count(*)::int AS n FROM ${t}`);
      assert.equal(n, 0, `${t} with no tenant`);
      const [{ m }] = await as(sql, "", (tx) => tx.unsafe(`SELECT count(*)::int AS m FROM ${t}`));
      assert.equal(m, 0, `${t} with an empty tenant`);
      const col = t === "tenants" ? "id" : "tenant_id";
      const [{ k }] = await as(
        sql,
        "acme",
        (tx) => tx.unsafe(`SELECT count(*)::int AS k FROM ${t} WHERE ${col} <> 'acme'`),
      );
      assert.equal(k, 0, `${t}: acme sees another tenant`);
    }
    // row_security = off makes a query fail, it does not lift the policies.
    await assert.rejects(
      sql.begin(async (tx) => {
        await tx`SET LOCAL row_security = off`;
        await tx`SELECT * FROM agents`;
      }),
      /row-level security/,
    );
  } finally {
    await sql.end();
  }
});

Deno.test("(a) a non-leakproof qual cannot leak another tenant's values in an error (policy runs first)", async () => {
  const sql = rawApp();
  try {
    for (
      const q of [
        `SELECT 1 FROM agents WHERE key_hash::int = 1`,
        `SELECT 1 FROM audit_events WHERE hash::int = 1`,
        `SELECT 1 FROM approvals WHERE (request->>'url')::int = 1`,
        `SELECT 1 FROM tenants WHERE id::int = 1`,
      ]
    ) {
      assert.deepEqual([...await sql.unsafe(q)], [], q);
    }
  } finally {
    await sql.end();
  }
});

Deno.test("(a) pg_stats shows nothing of RLS tables to the runtime, even after ANALYZE", async () => {
  await owner.transaction((tx) => tx.unsafe(`ANALYZE ${TABLES.join(", ")}`));
  const sql = rawApp();
  try {
    const rows = await sql`SELECT tablename, attname FROM pg_stats
      WHERE schemaname = 'public' AND tablename IN ${sql(TABLES)}`;
    assert.deepEqual([...rows], []);
    const ext = await sql`SELECT 1 FROM pg_stats_ext WHERE schemaname = 'public'`;
    assert.deepEqual([...ext], []);
  } finally {
    await sql.end();
  }
});

Deno.test("(a) writes into another tenant are refused while naming one's own tenant (or none)", async () => {
  const sql = rawApp();
  try {
    const head = GLOBEX_BEFORE.head;
    const attempts: [string, string | null][] = [
      [
        `INSERT INTO agents (tenant_id, name, key_hash, created_at)
        VALUES ('globex', 'evil', '${"e".repeat(64)}', 'now')`,
        "acme",
      ],
      [
        `INSERT INTO approvals (tenant_id, id, runtime, session, origin, method, kind, request,
          created_at, expires_at, state)
        VALUES ('globex', 'x', 'r', 's', 'o', 'm', 'form', '{}', now(), now() + interval '1h',
          'approved')`,
        "acme",
      ],
      [
        `INSERT INTO approvals (tenant_id, id, runtime, session, origin, method, kind, request,
          created_at, expires_at, state)
        VALUES ('globex', '${globexApproval.id}', 'r', 's', 'o', 'm', 'form', '{}', now(),
          now(), 'pending')
        ON CONFLICT (tenant_id, id) DO UPDATE SET state = 'approved'`,
        "acme",
      ],
      [
        `INSERT INTO audit_checkpoints (tenant_id, seq, hash, ts, runtime, key_id, sig)
        VALUES ('globex', 9, 'h', 't', 'r', 'k', 's')`,
        "acme",
      ],
      [
        `INSERT INTO audit_events (tenant_id, seq, ts, kind, source, decision, prev_hash, hash)
        VALUES ('globex', ${head.head_seq + 1}, 'now', 'x', 'action', 'allow',
          '${head.head_hash}', 'h')`,
        "acme",
      ],
      [
        `INSERT INTO audit_events (tenant_id, seq, ts, kind, source, decision, prev_hash, hash)
        VALUES ('globex', ${head.head_seq + 1}, 'now', 'x', 'action', 'allow',
          '${head.head_hash}', 'h')`,
        null,
      ],
    ];
    for (const [stmt, tenant] of attempts) {
      await assert.rejects(
        as(sql, tenant, (tx) => tx.unsafe(stmt)),
        /row-level security|APPROVAL_FINAL|TENANT_UNKNOWN/,
        stmt,
      );
    }
    // UPDATE/DELETE of globex's rows, naming acme or nobody, touch nothing.
    for (
      const [stmt, tenants] of [
        [
          `UPDATE approvals SET state = 'approved', decided_by = 'evil' WHERE tenant_id = 'globex'`,
          ["acme", null],
        ],
        [`DELETE FROM agents WHERE tenant_id = 'globex'`, ["acme", null]],
        [`DELETE FROM agents`, [null]],
        [`UPDATE approvals SET state = 'approved'`, [null]],
      ] as const
    ) {
      for (const tenant of tenants) {
        // Touches nothing, or is not allowed at all (agents have no DELETE grant).
        const r = await as(sql, tenant, (tx) => tx.unsafe(stmt)).then(
          (x) => x.count,
          (err: Error) => /permission denied/.test(err.message) ? 0 : err.message,
        );
        assert.equal(r, 0, `${stmt} (${tenant})`);
      }
    }
    // Moving one's own pending approval into globex.
    await using app = await PgDatabase.open({ url: pg.appUrl });
    const board = await PgDecisionStore.open(app, "acme", "approval", { runtime: "rt" });
    const mine = pending();
    await board.post(mine);
    await board[Symbol.asyncDispose]();
    await assert.rejects(
      as(sql, "acme", (tx) => tx`UPDATE approvals SET tenant_id = 'globex' WHERE id = ${mine.id}`),
      /APPROVAL_FINAL|row-level security|permission denied/,
    );
    assert.deepEqual(await globexState(), GLOBEX_BEFORE);
  } finally {
    await sql.end();
  }
});

// ---------------------------------------------------------------------------------------------
// (b)(j) the audit is append-only; no DDL, no grants, no privilege the role does not have

Deno.test("(b)(j) UPDATE/DELETE/TRUNCATE of audit rows, heads, retention, checkpoints, tenants are refused even with omotai.pruning=on", async () => {
  const sql = rawApp();
  try {
    for (
      const stmt of [
        `UPDATE audit_events SET decision = 'deny'`,
        `DELETE FROM audit_events`,
        `TRUNCATE audit_events`,
        `UPDATE audit_heads SET head_seq = 0`,
        `INSERT INTO audit_heads VALUES ('acme', 0, 'x', 1, 'x')`,
        `DELETE FROM audit_heads`,
        `UPDATE audit_retention SET days = 1`,
        `DELETE FROM audit_retention`,
        `INSERT INTO audit_retention VALUES ('acme', 1)`,
        `UPDATE audit_checkpoints SET sig = 'x'`,
        `DELETE FROM audit_checkpoints`,
        `TRUNCATE audit_checkpoints`,
        `INSERT INTO tenants (id) VALUES ('mallory')`,
        `UPDATE tenants SET id = 'x'`,
        `DELETE FROM tenants`,
        `UPDATE agents SET key_hash = '${"0".repeat(64)}'`,
        `TRUNCATE agents`,
        `DELETE FROM approvals`,
        `TRUNCATE approvals`,
        `TRUNCATE tenants CASCADE`,
      ]
    ) {
      for (const tenant of ["acme", "globex"]) {
        await assert.rejects(
          as(sql, tenant, async (tx) => {
            await tx`SELECT set_config('omotai.pruning', 'on', true)`;
            await tx.unsafe(stmt);
          }),
          /permission denied/,
          stmt,
        );
      }
    }
  } finally {
    await sql.end();
  }
  assert.deepEqual(await globexState(), GLOBEX_BEFORE);
});

Deno.test("(f)(j) DDL, GRANT, COMMENT, ownership, role switches and object creation anywhere are refused", async () => {
  const sql = rawApp();
  try {
    const [p] = await sql`SELECT
      has_database_privilege(current_database(), 'CREATE') AS db_create,
      has_database_privilege(current_database(), 'TEMP') AS db_temp,
      (SELECT coalesce(array_agg(nspname::text), '{}') FROM pg_namespace
        WHERE has_schema_privilege(oid, 'CREATE')) AS schemas,
      (SELECT rolsuper OR rolbypassrls OR rolcreaterole OR rolcreatedb
        FROM pg_roles WHERE rolname = current_user) AS strong`;
    assert.deepEqual(p, { db_create: false, db_temp: false, schemas: [], strong: false });
    const fn = `CREATE FUNCTION public.sha256(bytea) RETURNS bytea LANGUAGE sql AS 'select $1'`;
    for (
      const stmt of [
        `ALTER TABLE audit_events DISABLE TRIGGER ALL`,
        `ALTER TABLE agents NO FORCE ROW LEVEL SECURITY`,
        `ALTER TABLE approvals DISABLE ROW LEVEL SECURITY`,
        `ALTER TABLE tenants OWNER TO omotai_app`,
        `DROP POLICY agents_own ON agents`,
        `ALTER POLICY agents_own ON agents USING (true)`,
        `CREATE POLICY evil ON agents TO omotai_runtime USING (true)`,
        `DROP TABLE audit_checkpoints`,
        `DROP TRIGGER approvals_final ON approvals`,
        `CREATE TRIGGER evil BEFORE INSERT ON approvals FOR EACH ROW EXECUTE FUNCTION approvals_final()`,
        `CREATE RULE evil AS ON INSERT TO approvals DO INSTEAD NOTHING`,
        `COMMENT ON TABLE tenants IS 'pwned'`,
        `COMMENT ON FUNCTION audit_prune(timestamptz) IS 'pwned'`,
        `GRANT omotai_runtime TO omotai_owner`,
        `CREATE OR REPLACE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN OLD; END$$`,
        `ALTER FUNCTION audit_prune(timestamptz) RESET search_path`,
        `ALTER FUNCTION agent_by_key(text) OWNER TO omotai_app`,
        `ALTER FUNCTION audit_link() SECURITY INVOKER`,
        `CREATE TABLE public.evil (a int)`,
        fn,
        `CREATE OPERATOR public.<> (LEFTARG = text, RIGHTARG = text, FUNCTION = texteq)`,
        `CREATE TEMP TABLE audit_retention (tenant_id text, days int)`,
        `CREATE TEMP TABLE audit_heads (tenant_id text)`,
        `CREATE SCHEMA evil`,
        `CREATE EXTENSION IF NOT EXISTS pgcrypto`,
        `CREATE ROLE evil`,
        `CREATE PUBLICATION evil FOR TABLE agents`,
        `ALTER DATABASE omotai SET row_security = off`,
        `REINDEX TABLE agents`,
        `SET session_replication_role = replica`,
        `SET ROLE omotai_owner`,
        `SET SESSION AUTHORIZATION omotai_owner`,
        `SELECT pg_read_file('/etc/hostname')`,
        `COPY agents TO '/tmp/omotai-agents'`,
        `SELECT lo_import('/etc/hostname')`,
      ]
    ) {
      await assert.rejects(
        as(sql, "acme", (tx) => tx.unsafe(stmt)),
        (err: Error & { code?: string }) => {
          assert.notEqual(err.code, "42601", `${stmt}: syntax error ${err.message}`);
          assert.match(err.message, refused, stmt);
          return true;
        },
        stmt,
      );
    }
    // GRANT/REVOKE without the grant option only warn ("no privileges were granted"): check
    // that nothing changed.
    const before = await sql`SELECT relname::text, relacl::text FROM pg_class
      WHERE relname IN ${sql(TABLES)} ORDER BY relname`;
    for (
      const stmt of [
        `GRANT UPDATE, DELETE, TRUNCATE ON audit_events TO omotai_runtime`,
        `GRANT ALL ON agents, approvals, tenants, audit_heads TO PUBLIC`,
        `REVOKE SELECT ON agents FROM omotai_runtime`,
        `GRANT EXECUTE ON FUNCTION audit_prune(timestamptz) TO PUBLIC`,
      ]
    ) {
      await as(sql, "acme", (tx) => tx.unsafe(stmt)).catch(() => {});
    }
    const after = await sql`SELECT relname::text, relacl::text FROM pg_class
      WHERE relname IN ${sql(TABLES)} ORDER BY relname`;
    assert.deepEqual([...after], [...before]);
    const [{ upd }] = await sql`SELECT has_table_privilege('audit_events', 'UPDATE') AS upd`;
    assert.equal(upd, false);
  } finally {
    await sql.end();
  }
});

Deno.test("(b) the database does not recompute a row's hash: a bogus hash is accepted, but verify() flags it (detected, not hidden)", async () => {
  await addTenant(owner, "forge-co");
  const sql = rawApp();
  try {
    await as(
      sql,
      "forge-co",
      (tx) =>
        tx`INSERT INTO audit_events (tenant_id, seq, ts, kind, source, decision, prev_hash, hash)
        VALUES ('forge-co', 1, '2030-01-01T00:00:00.000Z', 'x', 'action', 'allow',
          ${tenantGenesis("forge-co")}, ${"f".repeat(64)})`,
    );
  } finally {
    await sql.end();
  }
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const v = await new PgAuditLog(app, "forge-co", { redactor: new Redactor() }).verify();
  assert.equal(v.ok, false, "a forged row is reported");
});

// ---------------------------------------------------------------------------------------------
// (c) prune

async function youngTenant(id: string): Promise<void> {
  await addTenant(owner, id);
  await using app = await PgDatabase.open({ url: pg.appUrl });
  await new PgAuditLog(app, id, { redactor: new Redactor() }).append([EVENT, EVENT, EVENT]);
}

Deno.test("(c) audit_prune keeps everything younger than retention for a far-future cutoff, and refuses with no tenant", async () => {
  await youngTenant("prune-future");
  const sql = rawApp();
  try {
    for (const cutoff of ["infinity", "9999-12-31", "294276-01-01"]) {
      const [r] = await as(
        sql,
        "prune-future",
        (tx) => tx.unsafe(`SELECT removed::int FROM audit_prune('${cutoff}'::timestamptz)`),
      );
      assert.equal(r.removed, 0, cutoff);
    }
    await assert.rejects(sql`SELECT * FROM audit_prune('infinity')`, /TENANT_UNSET/);
  } finally {
    await sql.end();
  }
});

const PRUNE_CUTOFFS = [
  ["NULL", "NULL"],
  ["'-infinity'", "'-infinity'::timestamptz"],
  ["a BC date", "'4000-01-01 BC'::timestamptz"],
] as const;

/** A tenant with 3 young rows asks audit_prune(cutoff): what went, what is left, does it verify. */
async function pruneAttack(cutoff: string) {
  const id = `prune-${crypto.randomUUID().slice(0, 8)}`;
  await youngTenant(id);
  const sql = rawApp();
  try {
    const [r] = await as(
      sql,
      id,
      (tx) => tx.unsafe(`SELECT removed::int, anchor_seq::int FROM audit_prune(${cutoff})`),
    );
    const [{ n }] = await owner.transaction((tx) =>
      tx`SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = ${id}`
    );
    await using app = await PgDatabase.open({ url: pg.appUrl });
    const v = await new PgAuditLog(app, id, { redactor: new Redactor() }).verify();
    return { removed: r.removed, left: n, verifies: v.ok };
  } finally {
    await sql.end();
  }
}

for (const [label, cutoff] of PRUNE_CUTOFFS) {
  Deno.test(`(c) audit_prune(${label}) removes no row younger than the tenant's retention`, async () => {
    assert.deepEqual(await pruneAttack(cutoff), { removed: 0, left: 3, verifies: true });
  });
}

/** With TEMP granted, a TEMP audit_retention (days -3650) shadows the real one in audit_prune. */
async function tempShadowAttack(): Promise<number> {
  // The deployment revokes TEMP from PUBLIC (docs/deploy.md), so this is latent: grant it, as a
  // deployment that skipped that line (or a later GRANT ALL ON DATABASE) would.
  const id = `prune-${crypto.randomUUID().slice(0, 8)}`;
  const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
  await su`GRANT TEMP ON DATABASE omotai TO omotai_runtime`;
  await youngTenant(id);
  const sql = rawApp();
  try {
    await as(sql, id, async (tx) => {
      await tx`CREATE TEMP TABLE audit_retention (tenant_id text, days integer) ON COMMIT DROP`;
      await tx`INSERT INTO audit_retention VALUES (${id}, -3650)`;
      await tx`GRANT SELECT ON audit_retention TO PUBLIC`;
      return await tx`SELECT removed::int FROM audit_prune(now() + interval '1 day')`;
    });
    const [{ n }] = await owner.transaction((tx) =>
      tx`SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = ${id}`
    );
    return n;
  } finally {
    await sql.end();
    await su`REVOKE TEMP ON DATABASE omotai FROM omotai_runtime`;
    await su.end();
  }
}

Deno.test("(c)(f) the SECURITY DEFINER functions search pg_temp last and name public tables: with TEMP granted, a TEMP audit_retention cannot shorten retention", async () => {
  assert.equal(await tempShadowAttack(), 3, "young rows left");
});

// ---------------------------------------------------------------------------------------------
// (d) approvals

Deno.test("(d) a decided approval cannot change; a pending one's request cannot change (also via ON CONFLICT DO UPDATE)", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const board = await PgDecisionStore.open(app, "acme", "approval", { runtime: "rt" });
  const rec = pending();
  await board.post(rec);
  const decided = pending();
  await board.post(decided);
  await board.decide(decided.id, { state: "denied", by: "console" });
  await board[Symbol.asyncDispose]();
  const sql = rawApp();
  try {
    for (
      const [id, set] of [
        [decided.id, `state = 'approved'`],
        [decided.id, `state = 'pending'`],
        [decided.id, `decided_by = 'alice'`],
        [decided.id, `expires_at = now() + interval '1 day'`],
        [rec.id, `request = '{"url":"https://evil.test"}'`],
        [rec.id, `origin = 'https://evil.test'`],
        [rec.id, `method = 'GET'`],
        [rec.id, `session = 's-2'`],
        [rec.id, `id = 'other'`],
      ]
    ) {
      await assert.rejects(
        as(sql, "acme", (tx) => tx.unsafe(`UPDATE approvals SET ${set} WHERE id = '${id}'`)),
        // The trigger, or the grant (only the outcome's columns are updatable at all).
        /APPROVAL_FINAL|permission denied/,
        set,
      );
    }
    await assert.rejects(
      as(
        sql,
        "acme",
        (tx) =>
          tx.unsafe(`INSERT INTO approvals (tenant_id, id, runtime, session, origin, method, kind,
            request, created_at, expires_at, state)
          VALUES ('acme', '${decided.id}', 'r', 's', 'o', 'm', 'form', '{}', now(), now(), 'pending')
          ON CONFLICT (tenant_id, id) DO UPDATE SET state = 'approved'`),
      ),
      /APPROVAL_FINAL/,
    );
  } finally {
    await sql.end();
  }
});

/** What the runtime's role may change on a pending approval of its tenant. */
async function approvalMutations(): Promise<Record<string, string>> {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const board = await PgDecisionStore.open(app, "acme", "approval", { runtime: "rt" });
  const rec = pending(60);
  await board.post(rec);
  await board[Symbol.asyncDispose]();
  const sql = rawApp();
  const out: Record<string, string> = {};
  try {
    for (
      const set of [
        `agent = 'trusted-bot'`,
        `kind = 'script'`,
        `runtime = 'evil'`,
        `created_at = '2000-01-01'`,
        `expires_at = now() + interval '10 years'`,
        `decided_by = 'alice', decided_at = '2000-01-01'`,
      ]
    ) {
      out[set] = await as(
        sql,
        "acme",
        (tx) => tx.unsafe(`UPDATE approvals SET ${set} WHERE id = '${rec.id}'`),
      ).then(
        () => "changed",
        () => "refused",
      );
    }
    out["INSERT state = 'approved', decided_by = 'alice'"] = await as(
      sql,
      "acme",
      (tx) =>
        tx.unsafe(`INSERT INTO approvals (tenant_id, id, runtime, session, origin, method, kind,
          request, created_at, expires_at, state, decided_at, decided_by)
        VALUES ('acme', '${crypto.randomUUID()}', 'rt', 's', 'https://bank.test', 'POST',
          'form', '{}', now(), now() + interval '1h', 'approved', now(), 'alice')`),
    ).then(
      () => "changed",
      () => "refused",
    );
    return out;
  } finally {
    await sql.end();
  }
}

Deno.test("(d) only a pending approval's outcome changes: not its agent, kind, runtime, created_at, expires_at; no decision without a state change; none inserted already decided", async () => {
  const out = await approvalMutations();
  assert.deepEqual(out, Object.fromEntries(Object.keys(out).map((k) => [k, "refused"])));
});

// ---------------------------------------------------------------------------------------------
// (e) agent keys

Deno.test("(e) agent_by_key answers for exactly one presented hash: no wildcard, no empty/NULL match, no listing", async () => {
  const sql = rawApp();
  try {
    for (const h of ["%", "", "_".repeat(64), `${globexKeyHash.slice(0, 63)}%`]) {
      assert.deepEqual([...await sql`SELECT * FROM agent_by_key(${h})`], [], h);
    }
    assert.deepEqual([...await sql`SELECT * FROM agent_by_key(NULL)`], []);
    // Agents are invisible, so feeding their hashes back does not work either.
    assert.deepEqual([...await sql`SELECT b.* FROM agents a, agent_by_key(a.key_hash) b`], []);
    // It returns no hash, only what the key's holder may know.
    const [g] = await sql`SELECT * FROM agent_by_key(${globexKeyHash})`;
    assert.deepEqual(Object.keys(g).sort(), ["created_at", "name", "policy", "tenant_id"]);
    // FOR UPDATE / SHARE on agents needs UPDATE: refused.
    await assert.rejects(sql`SELECT 1 FROM agents FOR SHARE`, /permission denied/);
  } finally {
    await sql.end();
  }
});

/** Sums "Rows Removed by Filter" over an EXPLAIN ANALYZE plan. */
async function removedByFilter(sql: postgres.Sql, query: string): Promise<number> {
  const [row] = await sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    await tx`SET LOCAL enable_bitmapscan = off`;
    return await tx.unsafe(`EXPLAIN (ANALYZE, FORMAT JSON) ${query}`);
  });
  let n = 0;
  const walk = (node: Record<string, unknown>) => {
    n += Number(node["Rows Removed by Filter"] ?? 0);
    for (const c of (node["Plans"] as Record<string, unknown>[] | undefined) ?? []) walk(c);
  };
  walk((row["QUERY PLAN"] as { Plan: Record<string, unknown> }[])[0].Plan);
  return n;
}

Deno.test("(a)(e) EXPLAIN ANALYZE (Rows Removed by Filter) cannot tell a tenant exists or rebuild key hashes with no tenant set: the policy's tenant_id equality becomes the index condition", async () => {
  const sql = rawApp();
  try {
    // Does tenant 'globex' exist? (an index cond on a leakproof operator, then the RLS filter)
    const exists = await removedByFilter(sql, `SELECT * FROM tenants WHERE id = 'globex'`);
    const missing = await removedByFilter(sql, `SELECT * FROM tenants WHERE id = 'nosuch'`);
    const tenantRange = await removedByFilter(
      sql,
      `SELECT * FROM audit_events WHERE tenant_id >= 'g' AND tenant_id < 'h' ORDER BY tenant_id, seq`,
    );
    assert.equal(tenantRange, 0, "audit rows of tenants starting with g");
    // Rebuild the smallest key hash in the table, one hex digit at a time. (Only an exact
    // key_hash = X uses the unique index and shows 1 removed row: what agent_by_key(X)
    // answers anyway.)
    let prefix = "";
    for (let pos = 0; pos < 64; pos++) {
      for (const c of "0123456789abcdef") {
        const lo = (prefix + c).padEnd(64, "0");
        const hi = (prefix + c).padEnd(64, "f");
        const n = await removedByFilter(
          sql,
          `SELECT * FROM agents WHERE key_hash >= '${lo}' AND key_hash <= '${hi}'`,
        );
        if (n > 0) {
          prefix += c;
          break;
        }
      }
      if (prefix.length !== pos + 1) break;
    }
    const smallest = [acmeKeyHash, globexKeyHash].sort()[0];
    assert.deepEqual(
      { tenantOracle: exists !== missing, keyHashRecovered: prefix === smallest },
      { tenantOracle: false, keyHashRecovered: false },
      `exists=${exists} missing=${missing} recovered=${prefix}`,
    );
  } finally {
    await sql.end();
  }
});

/** With no tenant set, INSERTs into audit_events for a missing, an existing and a fresh tenant. */
async function tenantOracle(fresh: string): Promise<Record<string, string>> {
  await addTenant(owner, fresh);
  const sql = rawApp();
  const attempt = (tenant: string, seq: number, prev: string) =>
    sql`INSERT INTO audit_events (tenant_id, seq, ts, kind, source, decision, prev_hash, hash)
      VALUES (${tenant}, ${seq}, 'now', 'x', 'action', 'allow', ${prev}, 'h')`
      .then(() => "inserted", (err: Error) => err.message.split(":")[0]);
  try {
    return {
      nosuch: await attempt("nosuch", 1, tenantGenesis("nosuch")),
      globexWrongGuess: await attempt("globex", 1, tenantGenesis("globex")),
      freshRightGuess: await attempt(fresh, 1, tenantGenesis(fresh)),
    };
  } finally {
    await sql.end();
  }
}

Deno.test("(a) with no tenant set, an INSERT cannot tell whether another tenant exists, or confirm a guess of its head (audit_link runs before the RLS check)", async () => {
  const answers = await tenantOracle("fresh-co");
  assert.ok(!Object.values(answers).includes("inserted"));
  assert.equal(new Set(Object.values(answers)).size, 1, JSON.stringify(answers));
});

// ---------------------------------------------------------------------------------------------
// (h) LISTEN / NOTIFY

Deno.test("(h) a spoofed NOTIFY on the approvals channel wakes a waiter, which re-reads the row and keeps waiting", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const store = await PgDecisionStore.open(app, "acme", "approval", { runtime: "rt" });
  const board = new ApprovalBoard(store, new MemorySink(), { pollMs: 60_000 });
  const sql = rawApp();
  try {
    // A session of its own: acme has other tests' pending approvals, and deciding one of
    // those instead left this call to time out.
    const session = `s-spoof-${crypto.randomUUID()}`;
    const waiting = board.request(heldClick({ timeoutMs: 120_000, session }));
    let settled = false;
    waiting.then(() => settled = true, () => {});
    const rec = await until(async () =>
      (await board.list("pending")).find((r) => r.session === session)
    );
    await new Promise((r) => setTimeout(r, 200));
    await sql`SELECT pg_notify('omotai_approvals', ${rec.id})`;
    await sql`NOTIFY omotai_approvals, ${sql.unsafe(`'${rec.id}'`)}`.catch(() => {});
    await new Promise((r) => setTimeout(r, 700));
    assert.equal(settled, false, "a spoof settles nothing");
    assert.equal(await board.decide(rec.id, "deny", "console"), "ok");
    assert.deepEqual(await waiting, { outcome: "denied", reason: "CONFIRM_DENIED" });
  } finally {
    await board.close();
    await store[Symbol.asyncDispose]();
    await sql.end();
  }
});

// ---------------------------------------------------------------------------------------------
// (i) denial of service against other tenants

Deno.test("(i) row locks on another tenant's head, tenant or retention rows are refused; FOR UPDATE on approvals stays inside RLS", async () => {
  const sql = rawApp();
  try {
    for (
      const t of ["audit_heads", "tenants", "audit_retention", "audit_events", "audit_checkpoints"]
    ) {
      for (const mode of ["FOR UPDATE", "FOR NO KEY UPDATE", "FOR SHARE", "FOR KEY SHARE"]) {
        await assert.rejects(
          as(sql, "globex", (tx) => tx.unsafe(`SELECT 1 FROM ${t} ${mode}`)),
          /permission denied/,
          `${t} ${mode}`,
        );
      }
      for (const mode of ["SHARE", "EXCLUSIVE", "ACCESS EXCLUSIVE", "SHARE ROW EXCLUSIVE"]) {
        await assert.rejects(
          as(sql, "acme", (tx) => tx.unsafe(`LOCK TABLE ${t} IN ${mode} MODE`)),
          /permission denied/,
          `LOCK ${t} ${mode}`,
        );
      }
    }
    // Locking every approval it can see (acme's, or with no tenant none) does not block globex.
    await using victim = await PgDatabase.open({ url: pg.appUrl, statementTimeoutMs: 1500 });
    const vboard = await PgDecisionStore.open(victim, "globex", "approval", { runtime: "rt-g" });
    const rec = pending();
    await vboard.post(rec);
    try {
      let outcome = "";
      await as(sql, "acme", async (tx) => {
        await tx`SELECT 1 FROM approvals FOR UPDATE`;
        outcome = await vboard.decide(rec.id, { state: "approved", by: "console" });
      });
      assert.equal(outcome, "ok");
    } finally {
      await vboard[Symbol.asyncDispose]();
    }
  } finally {
    await sql.end();
  }
});

Deno.test("(i) holding globex's advisory lock (no tenant set) cannot stop globex's audit appends (they take turns on the head row)", async () => {
  await using victim = await PgDatabase.open({ url: pg.appUrl, statementTimeoutMs: 1500 });
  const sql = rawApp();
  try {
    await sql`SELECT pg_advisory_lock(hashtextextended('globex', 0))`;
    const log = new PgAuditLog(victim, "globex", { redactor: new Redactor() });
    const r = await log.append([EVENT]).then(() => "appended", (err: Error) => err.message);
    assert.equal(r, "appended");
  } finally {
    await sql`SELECT pg_advisory_unlock_all()`.catch(() => {});
    await sql.end();
  }
});

/** LOCK TABLE … ACCESS EXCLUSIVE as acme's runtime; what globex's runtime meets meanwhile. */
async function lockAttack(table: "agents" | "approvals") {
  await using victim = await PgDatabase.open({ url: pg.appUrl, statementTimeoutMs: 1500 });
  const sql = rawApp();
  let victimResult = "not tried";
  try {
    const lock = await as(sql, "acme", async (tx) => {
      await tx.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      victimResult = table === "agents"
        ? await new PgAgentStore(victim, "globex").verify(globexAgent.key).then(
          (a) => a ? "verified" : "unknown key",
          (err: Error) => err.message,
        )
        : await victim.tenant("globex", (tx2) => tx2`SELECT 1 FROM approvals`).then(
          () => "read",
          (err: Error) => err.message,
        );
      throw new Error("LOCK_HELD");
    }).then(() => "", (err: Error) => /permission denied/.test(err.message) ? "refused" : "taken");
    return { lock, victim: victimResult };
  } finally {
    await sql.end();
  }
}

for (const table of ["agents", "approvals"] as const) {
  Deno.test(`(i) LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE is refused (it would stall every tenant's ${table === "agents" ? "key checks" : "approvals"})`, async () => {
    assert.deepEqual(await lockAttack(table), { lock: "refused", victim: "not tried" });
  });
}

/** A second runtime's own login, as docs/deploy.md asks (one login per runtime). */
async function secondLogin(): Promise<string> {
  const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
  const password = crypto.randomUUID();
  try {
    await su.unsafe(
      `DO $d$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'omotai_app2') THEN
          CREATE ROLE omotai_app2 LOGIN IN ROLE omotai_runtime;
        END IF;
      END $d$`,
    );
    await su.unsafe(`ALTER ROLE omotai_app2 PASSWORD '${password}'`);
  } finally {
    await su.end();
  }
  const url = new URL(pg.appUrl);
  url.username = "omotai_app2";
  url.password = password;
  return url.href;
}

Deno.test("(i) with a login per runtime, one runtime cannot terminate another's connections", async () => {
  await using victim = await PgDatabase.open({ url: await secondLogin(), max: 1 });
  const [{ pid }] = await victim.tenant("globex", (tx) => tx`SELECT pg_backend_pid() AS pid`);
  const sql = rawApp();
  try {
    const r = await sql`SELECT pg_terminate_backend(${pid}) AS ok`.then(
      ([x]) => x.ok ? "terminated" : "not terminated",
      (err: Error) => err.message,
    );
    assert.match(r, /permission denied|must be a member/, r);
  } finally {
    await sql.end();
  }
});

Deno.test("(i) a runtime that reconfigures its own login (read-only, another search_path) breaks no other runtime, and PgDatabase pins both at connect", async () => {
  // A role may always set its own defaults and password: what holds is that it reaches no
  // other runtime (each has its own login) and that the runtime's pool overrides them.
  const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
  const sql = rawApp();
  try {
    await sql.unsafe(`ALTER ROLE omotai_app SET default_transaction_read_only = on`);
    await sql.unsafe(`ALTER ROLE omotai_app IN DATABASE omotai SET search_path = pg_catalog`);
    await sql.unsafe(`ALTER ROLE omotai_app SET row_security = off`);
    await using same = await PgDatabase.open({ url: pg.appUrl });
    await using other = await PgDatabase.open({ url: await secondLogin() });
    for (const db of [same, other]) {
      const appended = await new PgAuditLog(db, "globex", { redactor: new Redactor() })
        .append([EVENT]).then(() => "appended", (err: Error) => err.message);
      assert.equal(appended, "appended");
    }
  } finally {
    await sql.end();
    await su`ALTER ROLE omotai_app RESET ALL`;
    await su`ALTER ROLE omotai_app IN DATABASE omotai RESET ALL`;
    await su.end();
  }
});

Deno.test("(a)(i) the tables reached only through functions: the runtime's role has no privilege on them, cannot read, change or lock them", async () => {
  const sql = rawApp();
  try {
    const rls = await sql`SELECT relname::text AS t, relrowsecurity AND relforcerowsecurity AS on
      FROM pg_class WHERE relname IN ${sql(FUNCTION_ONLY)} ORDER BY relname`;
    assert.deepEqual(
      rls.map((r) => [r.t, r.on]),
      [...FUNCTION_ONLY].sort().map((t) => [t, true]),
      "row-level security enabled and forced",
    );
    for (const t of FUNCTION_ONLY) {
      for (
        const p of ["SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE", "REFERENCES", "TRIGGER"]
      ) {
        const [{ ok }] = await sql`SELECT has_table_privilege(${t}, ${p}) AS ok`;
        assert.equal(ok, false, `${t}: ${p}`);
      }
      for (
        const stmt of [
          `SELECT * FROM ${t}`,
          `DELETE FROM ${t}`,
          `TRUNCATE ${t}`,
          `LOCK TABLE ${t} IN ACCESS EXCLUSIVE MODE`,
        ]
      ) {
        await assert.rejects(as(sql, "acme", (tx) => tx.unsafe(stmt)), /permission denied/, stmt);
      }
    }
  } finally {
    await sql.end();
  }
});

Deno.test("(a)(i) capture leases: another tenant's lease neither blocks nor answers; its token renews and releases nothing from another tenant; no tenant, no lease; a TTL is bounded", async () => {
  const sql = rawApp();
  const take = (tx: postgres.TransactionSql, token: string, ttl: number) =>
    tx`SELECT * FROM capture_lease_take(ARRAY['gh.pem']::text[], ${token}, 'session a on rt-a',
      ${ttl}::bigint)`;
  const globexRows = () =>
    owner.transaction((tx) =>
      tx`SELECT target, holder, expires_at FROM capture_leases WHERE tenant_id = 'globex'`
    );
  const before = [...await globexRows()];
  assert.equal(before.length, 1);
  try {
    // acme's own gh.pem is free: globex's lease is globex's, and nothing of it is answered.
    const token = crypto.randomUUID();
    const [got] = await as(sql, "acme", (tx) => take(tx, token, 1e12));
    assert.equal(got.taken, true);
    assert.equal(got.busy_holder, null);
    // The TTL asked for (thirty years) is ten minutes at most.
    const [{ ok }] = await owner.transaction((tx) =>
      tx`SELECT bool_and(expires_at <= now() + interval '10 minutes') AS ok FROM capture_leases
        WHERE tenant_id = 'acme'`
    );
    assert.equal(ok, true);
    const [{ n: renewed }] = await as(
      sql,
      "acme",
      (tx) => tx`SELECT capture_lease_renew(${GLOBEX_LEASE_TOKEN}, 600000) AS n`,
    );
    const [{ n: released }] = await as(
      sql,
      "acme",
      (tx) => tx`SELECT capture_lease_release(${GLOBEX_LEASE_TOKEN}) AS n`,
    );
    assert.deepEqual([renewed, released], [0, 0]);
    await as(sql, "acme", (tx) => tx`SELECT capture_lease_release(${token})`);
    // With no tenant named, nothing is taken (and nothing told).
    await assert.rejects(as(sql, null, (tx) => take(tx, token, 60_000)), /TENANT_UNSET/);
    await assert.rejects(as(sql, "", (tx) => take(tx, token, 60_000)), /TENANT_UNSET/);
    // A target that is no secret id is refused by the table.
    await assert.rejects(
      as(
        sql,
        "acme",
        (tx) => tx`SELECT * FROM capture_lease_take(ARRAY['../x']::text[], 't', 'h', 1000)`,
      ),
      /check constraint/,
    );
  } finally {
    await sql.end();
  }
  assert.deepEqual([...await globexRows()], before, "globex's lease is as it was");
});

Deno.test("globex is untouched by every attack above", async () => {
  const now = await globexState();
  // The DoS tests that a fix would let through may append globex rows; compare the rest.
  assert.deepEqual(
    { ...now, rows: 0, head: 0 },
    { ...GLOBEX_BEFORE, rows: 0, head: 0 },
  );
  await using app = await PgDatabase.open({ url: pg.appUrl });
  assert.deepEqual(
    (await new PgAuditLog(app, "globex", { redactor: new Redactor() }).verify()).problems,
    [],
  );
});

Deno.test(clusterTeardown("pg attack tests", pg, owner));
