/**
 * One contract for every `DomainStore` (the embedded SQLite rules and PostgreSQL), then
 * PostgreSQL across runtimes: a change on one runtime reaches another's snapshot within a
 * second, tenants are walled, and a database that is gone makes every decision a deny.
 */
import assert from "node:assert/strict";
import { OmotaiError } from "../errors.ts";
import { openDatabase } from "./database.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";
import { assertRefused, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import postgres from "postgres";
import type { DomainStore } from "./domain_store.ts";
import { SqliteDomainStore } from "./sqlite_domain_store.ts";
import { PgDomainStore } from "./pg_domain_store.ts";
import { ANSWER_BOUND_MS } from "../../tests/helpers/until.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
let tenants = 0;

const ADAPTERS: { name: string; open(): Promise<{ store: DomainStore } & AsyncDisposable> }[] = [
  {
    name: "sqlite",
    async open() {
      const dir = await Deno.makeTempDir({ prefix: "omotai-domains-contract-" });
      const db = openDatabase(`${dir}/omotai.db`);
      return {
        store: new SqliteDomainStore(db),
        async [Symbol.asyncDispose]() {
          db.close();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
  },
  {
    name: "postgres",
    async open() {
      const tenant = `domains-${++tenants}`;
      await addTenant(owner, tenant);
      const db = await PgDatabase.open({ url: pg.appUrl });
      const store = await PgDomainStore.open(db, tenant);
      return {
        store,
        async [Symbol.asyncDispose]() {
          await store[Symbol.asyncDispose]();
          await db[Symbol.asyncDispose]();
        },
      };
    },
  },
];

const code = (c: string) => (err: unknown) => err instanceof OmotaiError && err.code === c;

for (const adapter of ADAPTERS) {
  Deno.test(`DomainStore (${adapter.name}): a rule is in the next snapshot, replaced, removed; origins normalized; bad ones refused`, async () => {
    await using s = await adapter.open();
    const g0 = s.store.current().generation;
    assert.equal(
      await s.store.add("HTTPS://Portal.Example:443/path", "allow"),
      "https://portal.example",
    );
    let now = s.store.current();
    assert.ok(now.allow.has("https://portal.example"));
    assert.ok(now.generation > g0);
    await s.store.add("https://portal.example", "deny");
    now = s.store.current();
    assert.ok(now.deny.has("https://portal.example") && !now.allow.has("https://portal.example"));
    await s.store.add("http://127.0.0.2:8080", "allow");
    assert.deepEqual((await s.store.list()).map((r) => [r.origin, r.rule]), [
      ["http://127.0.0.2:8080", "allow"],
      ["https://portal.example", "deny"],
    ]);
    assert.equal(await s.store.remove("https://portal.example"), true);
    assert.equal(await s.store.remove("https://portal.example"), false);
    assert.ok(!s.store.current().deny.has("https://portal.example"));
    await assert.rejects(s.store.add("javascript:alert(1)", "allow"), code("BAD_ORIGIN"));
    await assert.rejects(s.store.remove("not an origin"), code("BAD_ORIGIN"));
  });
}

Deno.test("PgDomainStore: a rule changed on one runtime is in another's snapshot within a second; other tenants see nothing of it", async () => {
  await addTenant(owner, "dom-a");
  await addTenant(owner, "dom-b");
  const dbs = await Promise.all([0, 1, 2].map(() => PgDatabase.open({ url: pg.appUrl })));
  const a = await PgDomainStore.open(dbs[0], "dom-a", { pollMs: 60_000 });
  const a2 = await PgDomainStore.open(dbs[1], "dom-a", { pollMs: 60_000 });
  const b = await PgDomainStore.open(dbs[2], "dom-b", { pollMs: 60_000 });
  try {
    await a.add("https://partner.example", "allow");
    const t0 = performance.now();
    while (!a2.current().allow.has("https://partner.example")) {
      // Heard by notification: the poll is a minute, the bound a loaded machine's (until.ts).
      assert.ok(performance.now() - t0 < ANSWER_BOUND_MS, "heard before the poll (a minute)");
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(b.current().allow.size, 0);
    assert.deepEqual(await b.list(), []);
    assert.equal(await b.remove("https://partner.example"), false, "b cannot remove a's rule");
    assert.ok(a.current().allow.has("https://partner.example"));
  } finally {
    for (const r of [a, a2, b]) await r[Symbol.asyncDispose]();
    for (const db of dbs) await db[Symbol.asyncDispose]();
  }
});

Deno.test("PgDomainStore: with the database gone every decision is DOMAINS_UNREADABLE once the snapshot is stale, and rules apply again when it is back", async () => {
  await addTenant(owner, "dom-stale");
  await using db = await PgDatabase.open({ url: pg.appUrl, connectTimeoutS: 1 });
  const rules = await PgDomainStore.open(db, "dom-stale", { pollMs: 100, staleMs: 600 });
  try {
    await rules.add("https://kept.example", "allow");
    await pg.stop();
    try {
      await new Promise((r) => setTimeout(r, 1_500));
      assert.throws(() => rules.current(), code("DOMAINS_UNREADABLE"));
    } finally {
      await pg.start();
    }
    const t0 = performance.now();
    let back = false;
    while (!back && performance.now() - t0 < ANSWER_BOUND_MS) {
      back = await rules.refresh().then(() => true, () => false);
      if (!back) await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(back);
    assert.ok(rules.current().allow.has("https://kept.example"));
  } finally {
    await rules[Symbol.asyncDispose]();
  }
});

Deno.test("PgDomainStore: the runtime's role changes rules only through the functions, for its own tenant", async () => {
  await addTenant(owner, "dom-raw");
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    await assertRefused(sql, "dom-raw", [
      `INSERT INTO domain_rules (tenant_id, origin, rule) VALUES ('dom-raw', 'https://x.test', 'allow')`,
      `UPDATE domain_rules SET rule = 'allow'`,
      `DELETE FROM domain_rules`,
      `LOCK TABLE domain_rules IN ACCESS EXCLUSIVE MODE`,
    ], /permission denied/);
    await assertRefused(
      sql,
      null,
      [`SELECT domain_set('https://x.test', 'allow')`],
      /TENANT_UNSET/,
    );
  } finally {
    await sql.end();
  }
});

Deno.test(clusterTeardown("DomainStore contract", pg, owner));
