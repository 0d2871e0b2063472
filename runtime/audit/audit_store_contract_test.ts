/**
 * One contract for every `AuditStore`: the embedded SQLite log and PostgreSQL (a throwaway
 * cluster from Debian's `postgresql`, reached as the runtime's non-owner role under
 * row-level security). Each case runs against both.
 */
import assert from "node:assert/strict";
import { REDACTED, Redactor } from "../redact/mod.ts";
import { openDatabase } from "../store/database.ts";
import { PgDatabase } from "../store/pg_database.ts";
import { addTenant } from "../store/pg_tenants.ts";
import { startPostgres } from "../../tests/helpers/postgres.ts";
import { AuditLog } from "./audit_log.ts";
import type { AuditEvent } from "./audit_row.ts";
import { type AuditStore, sqliteAuditStore } from "./audit_store.ts";
import { PgAuditLog, tenantGenesis } from "./pg_audit_log.ts";
import { GENESIS_HASH } from "./audit_row.ts";

const SECRET = "Contract-Planted-Secret-91f2";

interface Adapter {
  name: string;
  /** A fresh, empty store; `tamper` changes a stored row behind the store's back. */
  open(redactor: Redactor): Promise<
    { store: AuditStore; genesis: string; tamper(seq: number): Promise<void> } & AsyncDisposable
  >;
}

const sqlite: Adapter = {
  name: "sqlite",
  async open(redactor) {
    const dir = await Deno.makeTempDir({ prefix: "omotai-audit-contract-" });
    const db = openDatabase(`${dir}/omotai.db`);
    return {
      store: sqliteAuditStore(db, new AuditLog(db, undefined, redactor)),
      genesis: GENESIS_HASH,
      tamper: (seq) => {
        db.exec("DROP TRIGGER audit_no_update");
        db.prepare("UPDATE audit SET decision = 'allow' WHERE seq = ?").run(seq);
        return Promise.resolve();
      },
      async [Symbol.asyncDispose]() {
        db.close();
        await Deno.remove(dir, { recursive: true });
      },
    };
  },
};

let tenants = 0;
const pg = await startPostgres();
{
  await using owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
  await owner.migrate();
}

const postgresAdapter: Adapter = {
  name: "postgres",
  async open(redactor) {
    const tenant = `contract-${++tenants}`;
    const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
    await addTenant(owner, tenant);
    const app = await PgDatabase.open({ url: pg.appUrl });
    return {
      store: new PgAuditLog(app, tenant, { redactor }),
      genesis: tenantGenesis(tenant),
      tamper: async (seq) => {
        // The owner lifts its own trigger: what a database owner could do.
        await owner.transaction(async (tx) => {
          await tx`ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only`;
          await tx`UPDATE audit_events SET decision = 'allow'
            WHERE tenant_id = ${tenant} AND seq = ${seq}`;
          await tx`ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only`;
        });
      },
      async [Symbol.asyncDispose]() {
        await app[Symbol.asyncDispose]();
        await owner[Symbol.asyncDispose]();
      },
    };
  },
};

const ADAPTERS = [sqlite, postgresAdapter];

function events(n: number, from = 0): AuditEvent[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return {
      kind: "request",
      source: "request",
      session: "s1",
      origin: `http://127.0.0.${i % 3 + 1}:8000/secret/path?token=abc${i}`,
      method: "GET",
      decision: i % 2 ? "deny" : "allow",
      reason: i % 2 ? "ORIGIN_NOT_ALLOWED" : "OK",
      module: "baseline",
    } as const;
  });
}

for (const adapter of ADAPTERS) {
  Deno.test(`AuditStore (${adapter.name}): append chains rows from the genesis in order, origins only, and verifies`, async () => {
    await using s = await adapter.open(new Redactor());
    assert.deepEqual(await s.store.append([]), []);
    const first = await s.store.append(events(3));
    const second = await s.store.append(events(4, 3));
    assert.deepEqual([...first, ...second].map((r) => r.seq), [1, 2, 3, 4, 5, 6, 7]);
    const rows = await s.store.rows();
    assert.deepEqual(rows, [...first, ...second]);
    assert.equal(rows[0].prev_hash, s.genesis);
    assert.equal(rows[1].prev_hash, rows[0].hash);
    assert.equal(rows[0].origin, "http://127.0.0.1:8000");
    assert.ok(!JSON.stringify(rows).includes("token"));
    assert.deepEqual((await s.store.rows(5, 1)).map((r) => r.seq), [6]);
    const v = await s.store.verify();
    assert.deepEqual(v.problems, []);
    assert.equal(v.rows, 7);
    assert.equal(v.lastSeq, 7);
  });

  Deno.test(`AuditStore (${adapter.name}): a secret in any free-text field is redacted before it is hashed and stored`, async () => {
    const redactor = new Redactor();
    redactor.add([SECRET]);
    await using s = await adapter.open(redactor);
    await s.store.append([{
      kind: "click",
      source: "action",
      agent: `agent ${SECRET}`,
      session: SECRET.toUpperCase(),
      decision: "deny",
      reason: `FOO ${SECRET}`,
      rule: encodeURIComponent(SECRET),
    }]);
    const rows = await s.store.rows();
    const text = JSON.stringify(rows);
    assert.ok(!text.toLowerCase().includes(SECRET.toLowerCase()), text);
    assert.ok(text.includes(REDACTED));
    assert.equal((await s.store.verify()).ok, true);
  });

  Deno.test(`AuditStore (${adapter.name}): a row changed behind the store's back fails verify`, async () => {
    await using s = await adapter.open(new Redactor());
    await s.store.append(events(4));
    await s.tamper(2);
    const v = await s.store.verify();
    assert.equal(v.ok, false);
    assert.match(v.problems[0], /row 2: contents do not match its hash/);
  });

  Deno.test(`AuditStore (${adapter.name}): prune of nothing old removes nothing and the chain still verifies`, async () => {
    await using s = await adapter.open(new Redactor());
    await s.store.append(events(5));
    const r = await s.store.prune(new Date(Date.now() - 100 * 86_400_000));
    assert.equal(r.removed, 0);
    assert.equal(r.anchorSeq, 1);
    assert.equal((await s.store.verify()).ok, true);
    await s.store.append(events(1, 5));
    assert.equal((await s.store.verify()).rows, 6);
  });

  Deno.test(`AuditStore (${adapter.name}): concurrent appends are serialized into one gapless chain`, async () => {
    await using s = await adapter.open(new Redactor());
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.store.append(events(3, i * 3))));
    const v = await s.store.verify();
    assert.deepEqual(v.problems, []);
    assert.equal(v.rows, 60);
  });
}

Deno.test({
  name: "AuditStore contract: the throwaway cluster stops",
  fn: async () => await pg[Symbol.asyncDispose](),
  sanitizeResources: false,
  sanitizeOps: false,
});
