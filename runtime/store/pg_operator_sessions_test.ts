/**
 * The console's login sessions in a real PostgreSQL, across two runtimes (two pools) of a
 * tenant: a session started on one is live on the other, a logout on either ends it on both,
 * it ends after its idle time on the database's clock, the tenant's count is bounded, no other
 * tenant can use it, the database holds no session id (nor CSRF token), and a database that
 * is down is no session, not an exception.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import type { OperatorSessionStore } from "../../ui/operator_sessions.ts";
import { assertRefused, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { PgDatabase } from "./pg_database.ts";
import {
  operatorSessionCsrf,
  operatorSessionHash,
  type PgOperatorSessionOptions,
  PgOperatorSessions,
} from "./pg_operator_sessions.ts";
import { addTenant } from "./pg_tenants.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
for (const t of ["acme", "globex", "initech"]) await addTenant(owner, t);
// Two runtimes of the load-balanced pair: a pool each.
const dbA = await PgDatabase.open({ url: pg.appUrl, connectTimeoutS: 2 });
const dbB = await PgDatabase.open({ url: pg.appUrl, connectTimeoutS: 2 });

/** The console's port, met by the adapter (checked here: runtime/store/ may not import ui/). */
function store(db: PgDatabase, tenant: string, options?: PgOperatorSessionOptions) {
  const s: OperatorSessionStore = new PgOperatorSessions(db, tenant, options);
  return s;
}

/** The tenant's rows, as the tables' owner sees them. */
async function rows(tenant: string): Promise<Record<string, unknown>[]> {
  return [
    ...await owner.transaction((tx) =>
      tx`SELECT * FROM operator_sessions WHERE tenant_id = ${tenant} ORDER BY created_at`
    ),
  ];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("PgOperatorSessions: started on runtime A, live and touched on runtime B with the same CSRF token; a logout on B ends it on A", async () => {
  const a = store(dbA, "acme");
  const b = store(dbB, "acme");
  const s = await a.create();
  assert.ok(s);
  assert.match(s.id, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(s.csrf, s.id);
  const onB = await b.touch(s.id);
  assert.ok(onB, "live on B");
  assert.equal(onB.id, s.id);
  assert.equal(onB.csrf, s.csrf, "every runtime derives the same CSRF token");
  assert.ok(onB.lastSeen >= s.lastSeen);
  assert.equal(await a.alive(s.id), true);
  const other = await a.create();
  assert.ok(other);
  assert.notEqual(other.csrf, s.csrf);

  assert.equal(await b.end(s.id), true);
  assert.equal(await a.touch(s.id), undefined, "logged out on A too");
  assert.equal(await a.alive(s.id), false);
  assert.equal(await b.end(s.id), true, "ending an ended session is no error");
  assert.equal(await a.touch(undefined), undefined);
  assert.equal(await a.touch("forged"), undefined);
  assert.equal(await a.touch("x".repeat(10_000)), undefined);
  assert.equal(await a.alive(""), false);
  assert.ok(await b.touch(other.id), "the other session lives on");
});

Deno.test("PgOperatorSessions: a session idle too long ends (the database's clock); each touch on either runtime restarts the clock", async () => {
  const a = store(dbA, "acme", { idleMs: 600 });
  const b = store(dbB, "acme", { idleMs: 600 });
  const s = await a.create();
  assert.ok(s);
  await sleep(400);
  assert.ok(await b.touch(s.id), "touched on B at 400 ms");
  await sleep(400);
  assert.equal(await a.alive(s.id), true, "800 ms old, 400 ms idle");
  assert.ok(await a.touch(s.id), "touched on A at 800 ms");
  await sleep(800);
  assert.equal(await b.alive(s.id), false, "800 ms idle");
  assert.equal(await b.touch(s.id), undefined);
  assert.ok(
    !(await rows("acme")).some((r) => r.id_hash === operatorSessionHash(s.id)),
    "an idle session is removed",
  );
});

Deno.test("PgOperatorSessions: a tenant's sessions are bounded, the least recently used going first", async () => {
  const a = store(dbA, "initech", { max: 2 });
  const b = store(dbB, "initech", { max: 2 });
  const s1 = (await a.create())!;
  const s2 = (await b.create())!;
  assert.ok(await b.touch(s1.id));
  const s3 = (await a.create())!;
  assert.equal(await a.touch(s2.id), undefined, "the least recently used went");
  assert.ok(await b.touch(s1.id));
  assert.ok(await b.touch(s3.id));
  assert.equal((await rows("initech")).length, 2);
  for (let i = 0; i < 5; i++) assert.ok(await b.create());
  assert.equal((await rows("initech")).length, 2);
  // The bound is the tenant's: another tenant's sessions are not counted, nor evicted.
  assert.ok((await rows("acme")).length >= 1);
});

Deno.test("PgOperatorSessions: a session of one tenant is unusable for another (touch, alive, end)", async () => {
  const acme = store(dbA, "acme");
  const globex = store(dbB, "globex");
  const s = (await acme.create())!;
  assert.equal(await globex.touch(s.id), undefined);
  assert.equal(await globex.alive(s.id), false);
  await globex.end(s.id);
  assert.ok(await acme.touch(s.id), "globex's logout does not reach acme's session");
  const g = (await globex.create())!;
  assert.equal(await acme.touch(g.id), undefined);
  assert.equal((await rows("globex"))[0].tenant_id, "globex");
});

Deno.test("PgOperatorSessions: the database holds no session id nor CSRF token, only the id's SHA-256; the runtime's role reaches the table only through the functions", async () => {
  const a = store(dbA, "acme");
  const s = (await a.create())!;
  assert.equal(s.csrf, operatorSessionCsrf(s.id));
  const all = await owner.transaction((tx) =>
    tx<{ row: string }[]>`SELECT row_to_json(o)::text AS row FROM operator_sessions o`
  );
  const dump = all.map((r) => r.row).join("\n");
  assert.ok(!dump.includes(s.id), "no session id");
  assert.ok(!dump.includes(s.csrf), "no CSRF token");
  assert.ok(dump.includes(operatorSessionHash(s.id)));
  assert.equal(
    operatorSessionHash(s.id),
    Array.from(
      new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(s.id))),
    ).map((b) => b.toString(16).padStart(2, "0")).join(""),
  );

  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    await assertRefused(sql, "acme", [
      `SELECT * FROM operator_sessions`,
      `SELECT id_hash FROM operator_sessions`,
      `INSERT INTO operator_sessions (tenant_id, id_hash) VALUES ('acme', repeat('a', 64))`,
      `UPDATE operator_sessions SET last_seen = now() + interval '10 years'`,
      `DELETE FROM operator_sessions`,
      `TRUNCATE operator_sessions`,
      `LOCK TABLE operator_sessions IN ACCESS EXCLUSIVE MODE`,
    ], /permission denied/);
    // Knowing a hash (what a reader of the database has) is not a session: the console hashes
    // what the cookie carries, so presenting the hash as the cookie names another row.
    assert.equal(await a.touch(operatorSessionHash(s.id)), undefined);
    // With no tenant set, the functions start nothing and reach nothing.
    await assert.rejects(
      sql`SELECT operator_session_start(${"b".repeat(64)}, 1000, 32)`,
      /TENANT_UNSET/,
    );
    const [{ at, ok, gone }] = await sql`SELECT
      operator_session_touch(${operatorSessionHash(s.id)}, 1000000) AS at,
      operator_session_alive(${operatorSessionHash(s.id)}, 1000000) AS ok,
      operator_session_end(${operatorSessionHash(s.id)}) AS gone`;
    assert.deepEqual([at, ok, gone], [null, false, false]);
    assert.ok(await a.touch(s.id));
  } finally {
    await sql.end();
  }
});

Deno.test({
  name:
    "PgOperatorSessions: with the database down there is no session (undefined, false), never an exception; back up, the session is live again",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const codes: string[] = [];
    const a = store(dbA, "acme", { onError: (code) => codes.push(code) });
    const b = store(dbB, "acme");
    const s = (await a.create())!;
    await pg.stop();
    try {
      assert.equal(await a.touch(s.id), undefined);
      assert.equal(await b.touch(s.id), undefined);
      assert.equal(await a.alive(s.id), false);
      assert.equal(await a.create(), undefined);
      assert.equal(await a.end(s.id), false, "a logout that did not reach the database says so");
      assert.ok(codes.length >= 4 && codes.every((c) => c === "DB_UNAVAILABLE"), codes.join());
    } finally {
      await pg.start();
    }
    let back: unknown;
    for (let i = 0; i < 50 && !back; i++) {
      back = await b.touch(s.id);
      if (!back) await sleep(100);
    }
    assert.ok(back, "the pool reconnects and the session is still there");
  },
});

Deno.test(clusterTeardown("PgOperatorSessions tests", pg, dbA, dbB, owner));
