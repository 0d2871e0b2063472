/**
 * Live sessions across runtimes in a real PostgreSQL: every runtime's sessions listed to the
 * tenant, a lapsed heartbeat shown as gone, the next start's sweep; one runtime cannot beat
 * for, change, end or sweep another's sessions, nor read the key that names them.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { assertRefused, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { PgDatabase } from "./pg_database.ts";
import { PgLiveSessions } from "./pg_live_sessions.ts";
import { addTenant } from "./pg_tenants.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
await addTenant(owner, "acme");
await addTenant(owner, "globex");

const session = (id: string, agent = "ada") => ({
  id,
  agent,
  isolation: "netns",
  startedAt: new Date().toISOString(),
});

/** Two runtimes, each its own pool and secret. */
async function runtimes(lapseMs?: number) {
  const dbs = await Promise.all([0, 1].map(() => PgDatabase.open({ url: pg.appUrl })));
  const [a, b] = dbs.map((db, i) =>
    new PgLiveSessions(db, { name: `rt-${i}`, secret: crypto.randomUUID(), lapseMs })
  );
  return {
    a,
    b,
    async [Symbol.asyncDispose]() {
      for (const db of dbs) await db[Symbol.asyncDispose]();
    },
  };
}

Deno.test("PgLiveSessions: an update or an end made for one tenant leaves the same id's row of another tenant as it was", async () => {
  await using r = await runtimes();
  const id = crypto.randomUUID();
  await r.a.open("acme", session(id));
  await r.a.open("globex", session(id, "gina"));
  assert.equal(
    await r.a.update("acme", id, { origin: "https://acme.test", actionsUsed: 7, tainted: true }),
    true,
  );
  const globex = (await r.a.list("globex")).find((s) => s.id === id);
  assert.deepEqual([globex?.origin, globex?.actionsUsed, globex?.tainted], [null, 0, false]);
  assert.equal(await r.a.end("acme", id), true);
  assert.ok((await r.a.list("globex")).some((s) => s.id === id), "globex's row stays");
  assert.ok(!(await r.a.list("acme")).some((s) => s.id === id));
  assert.equal(await r.a.end("globex", id), true);
});

Deno.test("PgLiveSessions: the tenant's sessions of every runtime, updated by their own runtime, ended, and walled from other tenants", async () => {
  await using r = await runtimes();
  const ida = crypto.randomUUID();
  const idb = crypto.randomUUID();
  await r.a.open("acme", session(ida));
  await r.b.open("acme", session(idb, "bob"));
  await r.b.open("globex", session(crypto.randomUUID(), "gina"));
  const listed = await r.a.list("acme");
  assert.deepEqual(
    listed.filter((s) => s.id === ida || s.id === idb).map((s) => [s.runtime, s.agent, s.gone]),
    [["rt-0", "ada", false], ["rt-1", "bob", false]],
  );
  assert.ok(!listed.some((s) => s.agent === "gina"), "globex's session is not acme's");
  assert.equal(
    await r.a.update("acme", ida, { origin: "https://a.test", actionsUsed: 3, tainted: true }),
    true,
  );
  // Another runtime's session is not this one's to change or end.
  assert.equal(
    await r.a.update("acme", idb, { origin: "x", actionsUsed: 99, tainted: false }),
    false,
  );
  assert.equal(await r.a.end("acme", idb), false);
  const mine = (await r.b.list("acme")).find((s) => s.id === ida)!;
  assert.deepEqual([mine.origin, mine.actionsUsed, mine.tainted], ["https://a.test", 3, true]);
  assert.equal(await r.a.end("acme", ida), true);
  assert.ok(!(await r.b.list("acme")).some((s) => s.id === ida));
});

Deno.test("PgLiveSessions: a runtime that stops beating shows its sessions as gone; its next start sweeps them; nobody else's sweep reaches them", async () => {
  await using r = await runtimes(300);
  const id = crypto.randomUUID();
  await r.a.open("acme", session(id));
  const beating = setInterval(() => r.b.heartbeat().catch(() => {}), 100);
  const other = crypto.randomUUID();
  await r.b.open("acme", session(other, "bob"));
  try {
    await new Promise((res) => setTimeout(res, 600));
    const listed = await r.b.list("acme");
    assert.equal(listed.find((s) => s.id === id)?.gone, true, "rt-0 stopped beating");
    assert.equal(listed.find((s) => s.id === other)?.gone, false, "rt-1 beats");
    assert.equal(await r.b.sweep() >= 1, true, "rt-1's sweep removes its own only");
    assert.ok((await r.b.list("acme")).some((s) => s.id === id), "rt-0's session is still there");
    assert.equal(await r.a.heartbeat(), 1);
    assert.equal((await r.b.list("acme")).find((s) => s.id === id)?.gone, false, "beating again");
    assert.equal(await r.a.sweep(), 1);
    assert.ok(!(await r.b.list("acme")).some((s) => s.id === id));
  } finally {
    clearInterval(beating);
  }
});

Deno.test("PgLiveSessions: the runtime's role cannot read the keys that name runtimes, nor change or remove rows directly", async () => {
  await using r = await runtimes();
  await r.a.open("acme", session(crypto.randomUUID()));
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    await assertRefused(sql, "acme", [
      `SELECT runtime_key FROM live_sessions`,
      `SELECT * FROM live_sessions`,
      `UPDATE live_sessions SET heartbeat_at = now()`,
      `UPDATE live_sessions SET tainted = false`,
      `DELETE FROM live_sessions`,
      `LOCK TABLE live_sessions IN ACCESS EXCLUSIVE MODE`,
    ], /permission denied/);
    // A guessed secret reaches nothing.
    const [{ n }] = await sql`SELECT live_sweep('guess') AS n`;
    assert.equal(n, 0);
  } finally {
    await sql.end();
  }
});

Deno.test("PgLiveSessions.kill: a console on any runtime of the tenant marks a session; only its holder hears it, and no other tenant can mark it", async () => {
  await using r = await runtimes();
  const id = crypto.randomUUID();
  await r.a.open("acme", session(id));
  assert.equal(await r.b.kill("globex", id), false, "another tenant does not see it");
  assert.deepEqual(await r.a.killed(), []);
  assert.equal(await r.b.kill("acme", id), true, "runtime B asks for it");
  assert.deepEqual(await r.b.killed(), [], "B does not hold it");
  assert.deepEqual(await r.a.killed(), [id], "A, its holder, hears it");
  assert.equal(await r.a.end("acme", id), true);
  assert.deepEqual(await r.a.killed(), []);
  assert.equal(await r.b.kill("acme", crypto.randomUUID()), false, "unknown id");
});

Deno.test(clusterTeardown("PgLiveSessions tests", pg, owner));
