/**
 * The PostgreSQL audit under attack: tenants that try to read, write or rewrite each other's
 * chains through the runtime's role, a role that names no tenant, UPDATE/DELETE/TRUNCATE by
 * the runtime and by the owner, rows that do not continue the chain, prunes of young rows,
 * runtimes appending at once, a runtime connecting with a role that would see past row-level
 * security, and the database stopped under a runtime and brought back.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { OmotaiError } from "../errors.ts";
import { Redactor } from "../redact/mod.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant, listTenants } from "./pg_tenants.ts";
import { PG_MIGRATIONS } from "./pg_migrations.ts";
import { assertRefused, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { type AuditEvent, auditFields, placedRow, rowTail } from "./audit_row.ts";
import { PgAuditLog, type PgAuditOptions, tenantGenesis } from "./pg_audit_log.ts";
import { checkpointCheck, generateCheckpointKey } from "../audit/checkpoint.ts";
import { Checkpointer, readCheckpoints } from "../audit/checkpointer.ts";
import { ANSWER_BOUND_MS } from "../../tests/helpers/until.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
await addTenant(owner, "acme");
await addTenant(owner, "globex");
/**
 * The runtime's pool, shared by the tests that need no pool of their own (a connection costs
 * a server process; none of them changes a session setting).
 */
const app = await PgDatabase.open({ url: pg.appUrl });

const EVENT: AuditEvent = {
  kind: "navigate",
  source: "action",
  agent: "ada",
  origin: "https://a.test/x",
  decision: "allow",
  reason: "OK",
};

/** A raw connection as the runtime's role, outside `PgDatabase` (what a compromised runtime has). */
function rawApp() {
  return postgres(pg.appUrl, { max: 1, onnotice: () => {} });
}

const code = (c: string) => (err: unknown) => err instanceof OmotaiError && err.code === c;

Deno.test("PgDatabase.migrate() is idempotent and says its version, also when several run at once; tenants are listed for the owner", async () => {
  assert.equal(await owner.migrate(), PG_MIGRATIONS.length);
  const again = await Promise.all([1, 2, 3].map(() => owner.migrate()));
  assert.deepEqual(again, [1, 2, 3].map(() => PG_MIGRATIONS.length));
  assert.deepEqual((await listTenants(owner)).map((t) => t.id), ["acme", "globex"]);
  await assert.rejects(addTenant(owner, "acme"), code("BAD_TENANT"));
  await assert.rejects(addTenant(owner, "Bad Tenant!"), code("BAD_TENANT"));
});

Deno.test("PgDatabase.open() refuses a runtime role that would see past row-level security: the owner, a superuser", async () => {
  await assert.rejects(PgDatabase.open({ url: pg.ownerUrl }), code("DB_ROLE_UNSAFE"));
  await assert.rejects(PgDatabase.open({ url: pg.superUrl }), code("DB_ROLE_UNSAFE"));
  await using app = await PgDatabase.open({ url: pg.appUrl });
  await assert.rejects(
    app.tenant("Robert'); DROP TABLE--", () => Promise.resolve()),
    code("BAD_TENANT"),
  );
});

Deno.test("PgAuditLog refuses to be built without a redactor, so no row can be stored unredacted", () => {
  for (const options of [undefined, {}, { redactor: {} }, { mirror: { write() {} } }]) {
    assert.throws(
      () => new PgAuditLog(app, "acme", options as unknown as PgAuditOptions),
      TypeError,
      JSON.stringify(options),
    );
  }
});

Deno.test("PgAuditLog: one tenant's chain is invisible to another's, and each starts at its own genesis", async () => {
  const acme = new PgAuditLog(app, "acme", { redactor: new Redactor() });
  const globex = new PgAuditLog(app, "globex", { redactor: new Redactor() });
  await acme.append([EVENT, EVENT]);
  await globex.append([{ ...EVENT, agent: "globex-agent" }]);
  const a = await acme.rows();
  const g = await globex.rows();
  assert.ok(a.every((r) => r.agent === "ada"));
  assert.deepEqual(g.map((r) => r.agent), ["globex-agent"]);
  assert.equal(a[0].prev_hash, tenantGenesis("acme"));
  assert.equal(g[0].prev_hash, tenantGenesis("globex"));
  // Through the app role, naming acme, even a query for globex's rows finds none.
  const seen = await app.tenant(
    "acme",
    (tx) => tx`SELECT count(*)::int AS n FROM audit_events WHERE tenant_id = 'globex'`,
  );
  assert.equal(seen[0].n, 0);
  const heads = await app.tenant("acme", (tx) => tx`SELECT tenant_id FROM audit_heads`);
  assert.deepEqual(heads.map((h) => h.tenant_id), ["acme"]);
  const tenants = await app.tenant("acme", (tx) => tx`SELECT id FROM tenants`);
  assert.deepEqual(tenants.map((t) => t.id), ["acme"]);
  // A tenant that does not exist reads nothing, and cannot append.
  const ghost = new PgAuditLog(app, "ghost", { redactor: new Redactor() });
  assert.deepEqual(await ghost.rows(), []);
  await assert.rejects(ghost.append([EVENT]), code("AUDIT_UNAVAILABLE"));
});

Deno.test("PgAuditLog: the runtime's role with app.tenant_id unset, empty or another tenant's reads nothing and writes nothing", async () => {
  await new PgAuditLog(app, "acme", { redactor: new Redactor() }).append([EVENT]);
  const sql = rawApp();
  try {
    for (const table of ["audit_events", "audit_heads", "tenants", "audit_retention"]) {
      const [{ n }] = await sql.unsafe(`SELECT count(*)::int AS n FROM ${table}`);
      assert.equal(n, 0, `${table} with no tenant`);
    }
    await sql.begin(async (tx) => {
      await tx`SELECT set_config('app.tenant_id', '', true)`;
      const [{ n }] = await tx`SELECT count(*)::int AS n FROM audit_events`;
      assert.equal(n, 0, "an empty tenant");
    });
    // Naming globex (or none), it cannot write into acme's chain, even a row that
    // continues acme's head exactly (so only row-level security can refuse it).
    const [head] = await owner.transaction((tx) =>
      tx`SELECT head_seq::int AS seq, head_hash FROM audit_heads WHERE tenant_id = 'acme'`
    );
    const insert = (tx: postgres.Sql | postgres.TransactionSql) =>
      tx`INSERT INTO audit_events (tenant_id, seq, ts, kind, source, decision, prev_hash, hash)
        VALUES ('acme', ${head.seq + 1}, 'now', 'x', 'action', 'allow', ${head.head_hash}, 'h')`;
    await assert.rejects(
      sql.begin(async (tx) => {
        await tx`SELECT set_config('app.tenant_id', 'globex', true)`;
        await insert(tx);
      }),
      // A tenant it cannot see is refused alike whether it exists or not.
      /row-level security|TENANT_UNKNOWN/,
    );
    await assert.rejects(insert(sql), /row-level security|TENANT_UNKNOWN/);
  } finally {
    await sql.end();
  }
});

Deno.test("PgAuditLog: UPDATE, DELETE and TRUNCATE are refused to the runtime's role, and UPDATE and DELETE to the owner too", async () => {
  const acme = new PgAuditLog(app, "acme", { redactor: new Redactor() });
  await acme.append([EVENT, EVENT]);
  const sql = rawApp();
  try {
    await assertRefused(sql, "acme", [
      `UPDATE audit_events SET decision = 'deny'`,
      `DELETE FROM audit_events`,
      `TRUNCATE audit_events`,
      `UPDATE audit_heads SET head_seq = 0`,
      `INSERT INTO tenants (id) VALUES ('mallory')`,
    ], /permission denied/);
  } finally {
    await sql.end();
  }
  for (
    const stmt of [
      `UPDATE audit_events SET decision = 'deny' WHERE tenant_id = 'acme'`,
      `DELETE FROM audit_events WHERE tenant_id = 'acme'`,
      `TRUNCATE audit_events`,
    ]
  ) {
    await assert.rejects(owner.transaction((tx) => tx.unsafe(stmt)), /AUDIT_APPEND_ONLY/, stmt);
  }
  assert.deepEqual((await acme.verify()).problems, []);
});

Deno.test("PgAuditLog: a row that does not continue its tenant's head is refused by the database", async () => {
  const sql = rawApp();
  try {
    for (
      const [seq, prev] of [[1, tenantGenesis("acme")], [999, "0".repeat(64)], [
        1_000,
        "x",
      ]] as const
    ) {
      await assert.rejects(
        sql.begin(async (tx) => {
          await tx`SELECT set_config('app.tenant_id', 'acme', true)`;
          await tx`INSERT INTO audit_events (tenant_id, seq, ts, kind, source, decision, prev_hash, hash)
            VALUES ('acme', ${seq}, 'now', 'x', 'action', 'allow', ${prev}, 'h')`;
        }),
        /AUDIT_CHAIN_BROKEN/,
        `seq ${seq}`,
      );
    }
  } finally {
    await sql.end();
  }
});

Deno.test("audit_append(): the database places each row at the head it holds and hashes it as rowHash() does; a batch with one bad row writes none of it", async () => {
  await addTenant(owner, "append-co");
  const log = new PgAuditLog(app, "append-co", { redactor: new Redactor() });
  await log.append([EVENT, EVENT]);
  const head = await log.head();
  const fields = (kind: string) =>
    auditFields(
      { kind, source: "action", decision: "allow" },
      "2026-12-02T00:00:00.000Z",
      (s) => s,
    );
  const call = (rows: unknown) =>
    app.statement((sql) =>
      sql<{ seq: string; prev_hash: string; hash: string }[]>`
        SELECT * FROM audit_append('append-co', ${sql.json(rows as never)})`
    );
  const a = fields("a");
  const b = fields("b");
  const placed = await call([{ ...a, tail: rowTail(a) }, { ...b, tail: rowTail(b) }]);
  const first = placedRow(a, head.seq + 1, head.hash);
  const second = placedRow(b, head.seq + 2, first.hash);
  assert.deepEqual(placed.map((p) => [Number(p.seq), p.prev_hash, p.hash]), [
    [first.seq, first.prev_hash, first.hash],
    [second.seq, second.prev_hash, second.hash],
  ]);
  // The second row refused by the table: the first, placed and hashed already, goes too.
  const after = await log.head();
  await assert.rejects(call([{ ...a, tail: rowTail(a) }, { ...b, kind: null, tail: rowTail(b) }]));
  assert.deepEqual(await log.head(), after);
  for (const junk of [[], {}, "x", [{ ...a }]]) {
    await assert.rejects(call(junk), /AUDIT_ROWS_INVALID/);
  }
  assert.deepEqual(await log.head(), after);
  assert.deepEqual((await log.verify()).problems, []);
  assert.equal((await log.verify()).rows, 4);
});

Deno.test("PgAuditLog.append(): text a page can put in a row (quotes, backslashes, controls, line separators, emoji, combining marks, 100 kB) is hashed by the database byte for byte as by the runtime", async () => {
  await addTenant(owner, "text-co");
  const log = new PgAuditLog(app, "text-co", { redactor: new Redactor() });
  const hostile = [
    'a"b\\c',
    "\b\f\n\r\t\u0001\u001f\u007f",
    "\u2028\u2029",
    "😀 ağ e\u0301 \ufeff",
    "]\n[1,",
    "x".repeat(100_000),
  ];
  const rows = await log.append(
    hostile.map((text) => ({ ...EVENT, kind: text, reason: text, method: text })),
  );
  assert.equal(rows.length, hostile.length);
  assert.deepEqual(rows.map((r) => r.kind), hostile);
  assert.deepEqual((await log.verify()).problems, []);
});

Deno.test("PgAuditLog.prune() removes only rows past the tenant's retention, whatever cutoff the runtime asks for", async () => {
  await addTenant(owner, "prune-co");
  const old = new PgAuditLog(app, "prune-co", {
    redactor: new Redactor(),
    now: () => new Date(Date.now() - 120 * 86_400_000),
  });
  const young = new PgAuditLog(app, "prune-co", { redactor: new Redactor() });
  await old.append([EVENT, EVENT, EVENT]);
  await young.append([EVENT, EVENT]);
  // Asked to remove everything up to tomorrow: only the 120-day-old rows go (retention 90).
  const r = await young.prune(new Date(Date.now() + 86_400_000));
  assert.deepEqual(r, { removed: 3, anchorSeq: 4 });
  const v = await young.verify();
  assert.deepEqual(v.problems, []);
  assert.deepEqual([v.firstSeq, v.lastSeq, v.rows], [4, 5, 2]);
  await young.append([EVENT]);
  assert.equal((await young.verify()).ok, true);
});

Deno.test("PgAuditLog: four runtimes appending to one tenant at once make one gapless chain", async () => {
  await addTenant(owner, "busy-co");
  const runtimes = await Promise.all(
    [1, 2, 3, 4].map(() => PgDatabase.open({ url: pg.appUrl, max: 4 })),
  );
  try {
    const logs = runtimes.map((db) => new PgAuditLog(db, "busy-co", { redactor: new Redactor() }));
    await Promise.all(
      logs.flatMap((log, i) =>
        Array.from({ length: 10 }, (_, k) => log.append([{ ...EVENT, agent: `r${i}-${k}` }, EVENT]))
      ),
    );
    const v = await logs[0].verify();
    assert.deepEqual(v.problems, []);
    assert.equal(v.rows, 80);
  } finally {
    for (const db of runtimes) await db[Symbol.asyncDispose]();
  }
});

Deno.test("PgAuditLog: with the database stopped an append fails as AUDIT_UNAVAILABLE within its bound, and works again once it is back", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl, connectTimeoutS: 2 });
  const acme = new PgAuditLog(app, "acme", { redactor: new Redactor() });
  await acme.append([EVENT]);
  await pg.stop();
  try {
    const t0 = performance.now();
    await assert.rejects(acme.append([EVENT]), code("AUDIT_UNAVAILABLE"));
    // Its bound (connect and statement timeouts), on a loaded machine: never a hang.
    assert.ok(performance.now() - t0 < ANSWER_BOUND_MS, `took ${performance.now() - t0} ms`);
  } finally {
    await pg.start();
  }
  let ok = false;
  for (let i = 0; i < 50 && !ok; i++) {
    ok = await acme.append([EVENT]).then(() => true, () => false);
    if (!ok) await new Promise((r) => setTimeout(r, 200));
  }
  assert.ok(ok, "the same pool appends again without a restart");
  assert.deepEqual((await acme.verify()).problems, []);
});

Deno.test("PgAuditLog.verify(): rows deleted by the superuser with the anchor moved past them pass the chain alone and fail the checkpoints", async () => {
  await addTenant(owner, "cut-co");
  const log = new PgAuditLog(app, "cut-co", { redactor: new Redactor() });
  const key = generateCheckpointKey();
  const dir = await Deno.makeTempDir({ prefix: "omotai-cut-" });
  try {
    await log.append([EVENT, EVENT, EVENT]);
    const signer = new Checkpointer({
      store: log,
      key,
      runtime: "rt",
      file: `${dir}/cp.jsonl`,
      log: () => {},
    });
    await signer.checkpoint();
    await using root = await PgDatabase.open({ url: pg.superUrl }, "owner");
    await root.transaction(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`DELETE FROM audit_events WHERE tenant_id = 'cut-co'`;
      await tx`UPDATE audit_heads SET anchor_seq = head_seq + 1, anchor_hash = head_hash
        WHERE tenant_id = 'cut-co'`;
    });
    assert.deepEqual((await log.verify()).problems, [], "the chain alone cannot tell");
    const { checkpoints } = await readCheckpoints(`${dir}/cp.jsonl`);
    const v = await log.verify(checkpointCheck({ checkpoints, publicKey: key.public }));
    assert.equal(v.ok, false);
    assert.match(v.problems.join("\n"), /removed before the retention allows; the history was cut/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(clusterTeardown("PgAuditLog tests", pg, owner, app));
