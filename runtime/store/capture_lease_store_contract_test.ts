/**
 * One contract for `CaptureLeaseStore` over both stores' rows: the embedded SQLite file (two
 * connections to one file: two processes) and PostgreSQL (two pools as the runtime's
 * non-owner role: two runtimes of a tenant, the database's clock). The same vectors run
 * against both: a lease is held, refused to another holder (`busy`, naming the target, the
 * holder and the expiry) and released; overlapping target sets are refused whole, disjoint
 * ones are not; a holder that stops renewing (a runtime that crashed) loses its lease once it
 * expires and the next capture takes it over; a holder that renews keeps it past its TTL; a
 * release removes the releasing lease's rows only. (What a runtime may not do to another
 * tenant's rows is PostgreSQL's alone: `pg_capture_leases_test.ts`.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { until } from "../../tests/helpers/until.ts";
import {
  type CaptureLease,
  type CaptureLeaseOptions,
  CaptureLeases,
} from "./capture_lease_store.ts";
import { openDatabase } from "./database.ts";
import { PgCaptureLeaseRows } from "./pg_capture_leases.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";
import { SqliteCaptureLeaseRows } from "./sqlite_capture_leases.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
const poolA = await PgDatabase.open({ url: pg.appUrl });
const poolB = await PgDatabase.open({ url: pg.appUrl });
const sqliteDir = await Deno.makeTempDir({ prefix: "omotai-leases-" });
const files: DatabaseSync[] = [];
let opened = 0;

/** How a runtime's leases run in a vector (runtime name and the times). */
type Runtime = Omit<CaptureLeaseOptions, "runtime"> & { name?: string };

interface Adapter {
  name: string;
  /** A fresh store shared by two runtimes: each `runtime()` call is a new one on it. */
  open(): Promise<{ a: (o?: Runtime) => CaptureLeases; b: (o?: Runtime) => CaptureLeases }>;
}

const ADAPTERS: Adapter[] = [
  {
    name: "sqlite",
    open() {
      const path = join(sqliteDir, `leases-${++opened}.db`);
      const [one, two] = [openDatabase(path), openDatabase(path)];
      files.push(one, two);
      const on = (db: DatabaseSync) => (o: Runtime = {}) =>
        new CaptureLeases(new SqliteCaptureLeaseRows(db), { runtime: o.name ?? "rt-a", ...o });
      return Promise.resolve({ a: on(one), b: on(two) });
    },
  },
  {
    name: "postgres",
    async open() {
      const tenant = `leases-${++opened}`;
      await addTenant(owner, tenant);
      const on = (db: PgDatabase) => (o: Runtime = {}) =>
        new CaptureLeases(new PgCaptureLeaseRows(db, tenant), { runtime: o.name ?? "rt-a", ...o });
      return { a: on(poolA), b: on(poolB) };
    },
  },
];

function held(lease: CaptureLease): Extract<CaptureLease, { kind: "held" }> {
  assert.equal(lease.kind, "held", JSON.stringify(lease));
  return lease as Extract<CaptureLease, { kind: "held" }>;
}

function busy(lease: CaptureLease): Extract<CaptureLease, { kind: "busy" }> {
  if (lease.kind === "held") {
    void lease.release();
    assert.fail("the lease was held");
  }
  return lease;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const adapter of ADAPTERS) {
  Deno.test(`CaptureLeaseStore (${adapter.name}): held, busy for another holder on another runtime, released, taken again`, async () => {
    const { a, b } = await adapter.open();
    const first = held(await a().acquire(["gh.pem", "gh.secret", "gh.pem"], "s-1"));
    assert.deepEqual(first.targets, ["gh.pem", "gh.secret"], "sorted, each once");
    assert.equal(first.lost(), false);
    const before = Date.now();
    const second = busy(await b({ name: "rt-b" }).acquire(["gh.secret"], "s-2"));
    assert.equal(second.target, "gh.secret");
    assert.equal(second.by, "session s-1 on rt-a");
    assert.ok(Date.parse(second.until) > before, second.until);
    // Another holder on the same runtime is refused the same way.
    busy(await a().acquire(["gh.pem"], "s-3"));
    await first.release();
    await first.release(); // once; a second call does nothing
    assert.equal(first.lost(), true, "a released lease holds nothing");
    const third = held(await b({ name: "rt-b" }).acquire(["gh.pem", "gh.secret"], "s-2"));
    await third.release();
  });

  Deno.test(`CaptureLeaseStore (${adapter.name}): a partial overlap is refused whole; disjoint sets are both held`, async () => {
    const { a, b } = await adapter.open();
    const one = held(await a().acquire(["t-a", "t-b"], "s-1"));
    const refused = busy(await b().acquire(["t-c", "t-b", "t-d"], "s-2"));
    assert.equal(refused.target, "t-b");
    // Nothing of the refused set was taken: its free targets are free.
    const free = held(await a().acquire(["t-c", "t-d"], "s-3"));
    const disjoint = held(await b().acquire(["t-e"], "s-4"));
    busy(await b().acquire(["t-e", "t-f"], "s-5"));
    for (const l of [one, free, disjoint]) await l.release();
    await held(await b().acquire(["t-a", "t-b", "t-c", "t-d", "t-e", "t-f"], "s-6")).release();
  });

  Deno.test(`CaptureLeaseStore (${adapter.name}): eight captures racing on two runtimes for overlapping targets: exactly one holds`, async () => {
    const { a, b } = await adapter.open();
    // Every set shares q-1 with every other, in either order.
    const sets = [["q-1", "q-2"], ["q-2", "q-1"], ["q-3", "q-1"], ["q-1"]];
    const all = await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) => (i % 2 ? b({ name: "rt-b" }) : a()).acquire(sets[i % sets.length], `s-${i}`),
      ),
    );
    const winners = all.filter((l) => l.kind === "held");
    for (const l of winners) if (l.kind === "held") await l.release();
    assert.equal(winners.length, 1, JSON.stringify(all));
    for (const l of all) if (l.kind === "busy") assert.match(l.target, /^q-[123]$/);
  });

  Deno.test(`CaptureLeaseStore (${adapter.name}): a holder that stops renewing (a crashed runtime) loses its lease once it expires; the next capture takes it over`, async () => {
    const { a, b } = await adapter.open();
    // The crashed runtime: its lease lasts a second and it never renews.
    const crashed = held(
      await a({ ttlMs: 1000, renewMs: 3_600_000 }).acquire(["x-1", "x-2"], "s-1"),
    );
    busy(await b().acquire(["x-2"], "s-2"));
    const next = await until(async () => {
      const l = await b({ name: "rt-b" }).acquire(["x-1", "x-2", "x-3"], "s-2");
      return l.kind === "held" ? l : undefined;
    }, 30_000);
    assert.equal(crashed.lost(), true, "the crashed holder knows it lost the lease");
    // Its late release removes nothing of the new holder's.
    await crashed.release();
    const taken = busy(await a().acquire(["x-1"], "s-3"));
    assert.equal(taken.by, "session s-2 on rt-b");
    await next.release();
  });

  Deno.test(`CaptureLeaseStore (${adapter.name}): a holder that renews keeps its lease past its TTL`, async () => {
    const { a, b } = await adapter.open();
    const lease = held(await a({ ttlMs: 2000, renewMs: 150 }).acquire(["r-1"], "s-1"));
    try {
      const start = Date.now();
      // Two TTLs of renewals: every check meanwhile finds it held.
      while (Date.now() - start < 4000) {
        busy(await b().acquire(["r-1"], "s-2"));
        await sleep(250);
      }
      assert.equal(lease.lost(), false);
    } finally {
      await lease.release();
    }
    await held(await b().acquire(["r-1"], "s-2")).release();
  });

  Deno.test(`CaptureLeaseStore (${adapter.name}): no target, or more than 16, is refused before the store`, async () => {
    const { a } = await adapter.open();
    await assert.rejects(a().acquire([], "s-1"), RangeError);
    await assert.rejects(
      a().acquire(Array.from({ length: 17 }, (_, i) => `t-${i}`), "s-1"),
      RangeError,
    );
  });
}

Deno.test({
  name: "capture leases contract: the SQLite files are removed",
  fn: async () => {
    for (const f of files) f.close();
    await Deno.remove(sqliteDir, { recursive: true });
  },
});

Deno.test(clusterTeardown("capture leases contract", pg, owner, poolA, poolB));
