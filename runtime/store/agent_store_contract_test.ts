/**
 * One contract for every `AgentStore` (the embedded SQLite agents and PostgreSQL, reached as
 * the runtime's non-owner role under row-level security), then PostgreSQL's tenant walls:
 * one tenant's keys, names and removals never reach another's.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { openDatabase } from "./database.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { agentKeyHash, type AgentStore } from "./agent_store.ts";
import { SqliteAgentStore } from "./sqlite_agent_store.ts";
import { PgAgentStore } from "./pg_agent_store.ts";
import { OmotaiError } from "../errors.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
let tenants = 0;

interface Adapter {
  name: string;
  open(): Promise<{ store: AgentStore } & AsyncDisposable>;
}

const ADAPTERS: Adapter[] = [
  {
    name: "sqlite",
    async open() {
      const dir = await Deno.makeTempDir({ prefix: "omotai-agents-contract-" });
      const db = openDatabase(`${dir}/omotai.db`);
      return {
        store: new SqliteAgentStore(db),
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
      const tenant = `agents-${++tenants}`;
      await addTenant(owner, tenant);
      const app = await PgDatabase.open({ url: pg.appUrl });
      return {
        store: new PgAgentStore(app, tenant),
        [Symbol.asyncDispose]: () => app[Symbol.asyncDispose](),
      };
    },
  },
];

const code = (c: string) => (err: unknown) => err instanceof OmotaiError && err.code === c;

for (const adapter of ADAPTERS) {
  Deno.test(`AgentStore (${adapter.name}): a key made once verifies as its agent and tenant; others do not`, async () => {
    await using s = await adapter.open();
    const { name, key } = await s.store.add("ada");
    assert.equal(name, "ada");
    assert.match(key, /^omk_[A-Za-z0-9_-]{43}$/);
    const found = await s.store.verify(key);
    assert.equal(found?.name, "ada");
    assert.equal(found?.tenant, s.store.tenant);
    assert.ok(found?.createdAt);
    for (
      const wrong of ["", key.slice(0, -1), key + "x", "omk_" + "A".repeat(43), key.toUpperCase()]
    ) {
      assert.equal(await s.store.verify(wrong), undefined, wrong);
    }
  });

  Deno.test(`AgentStore (${adapter.name}): list, duplicate names, bad names, removal`, async () => {
    await using s = await adapter.open();
    const policy = await Deno.makeTempFile({ suffix: ".yaml" });
    try {
      const b = await s.store.add("bob", policy);
      await s.store.add("ada");
      assert.deepEqual((await s.store.list()).map((a) => [a.name, a.policy]), [
        ["ada", undefined],
        ["bob", policy],
      ]);
      await assert.rejects(s.store.add("ada"), code("AGENT_EXISTS"));
      await assert.rejects(s.store.add("Not A Name"), code("BAD_AGENT_NAME"));
      await assert.rejects(s.store.add("carol", "relative.yaml"), code("BAD_POLICY_PATH"));
      assert.equal(await s.store.remove("bob"), true);
      assert.equal(await s.store.remove("bob"), false);
      assert.equal(await s.store.verify(b.key), undefined, "a removed key stops verifying");
      assert.deepEqual((await s.store.list()).map((a) => a.name), ["ada"]);
    } finally {
      await Deno.remove(policy);
    }
  });
}

Deno.test("PgAgentStore: tenants' agents are walled: keys verify to their own tenant, names and removals stay inside", async () => {
  await addTenant(owner, "wall-a");
  await addTenant(owner, "wall-b");
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const a = new PgAgentStore(app, "wall-a");
  const b = new PgAgentStore(app, "wall-b");
  const ka = await a.add("ada");
  // The same name in another tenant is another agent with another key.
  const kb = await b.add("ada");
  assert.equal((await b.verify(ka.key))?.tenant, "wall-a", "a key names its own tenant");
  assert.equal((await a.verify(kb.key))?.tenant, "wall-b");
  assert.deepEqual((await a.list()).map((x) => x.name), ["ada"]);
  assert.equal(await b.remove("ada"), true);
  assert.equal((await a.verify(ka.key))?.name, "ada", "b's removal left a's agent");
  assert.equal(await b.verify(kb.key), undefined);
});

Deno.test("PgAgentStore: the runtime's role reads no agent, hash or name without its tenant, and agent_by_key answers only for the presented key", async () => {
  await addTenant(owner, "raw-a");
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const { key } = await new PgAgentStore(app, "raw-a").add("ada");
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    const [{ n }] = await sql`SELECT count(*)::int AS n FROM agents`;
    assert.equal(n, 0, "no tenant: no rows");
    await sql.begin(async (tx) => {
      await tx`SELECT set_config('app.tenant_id', 'raw-other', true)`;
      const [{ m }] = await tx`SELECT count(*)::int AS m FROM agents`;
      assert.equal(m, 0, "another tenant: no rows");
    });
    // Nor can it plant an agent (a key it knows) in raw-a while naming another tenant.
    await assert.rejects(
      sql.begin(async (tx) => {
        await tx`SELECT set_config('app.tenant_id', 'raw-other', true)`;
        await tx`INSERT INTO agents (tenant_id, name, key_hash, created_at)
          VALUES ('raw-a', 'mallory', ${agentKeyHash("omk_mallory")}, 'now')`;
      }),
      /row-level security/,
    );
    const hit = await sql`SELECT * FROM agent_by_key(${agentKeyHash(key)})`;
    assert.equal(hit.length, 1);
    for (const probe of ["", "%", agentKeyHash("omk_nope")]) {
      assert.equal((await sql`SELECT * FROM agent_by_key(${probe})`).length, 0, probe);
    }
    await assert.rejects(sql`UPDATE agents SET name = 'x'`, /permission denied/);
  } finally {
    await sql.end();
  }
});

Deno.test(clusterTeardown("AgentStore contract", pg, owner));
