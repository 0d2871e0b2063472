/**
 * One contract for the console's `OperatorSessionStore`: the embedded `OperatorSessions` (in
 * memory, on a clock the test moves) and `PgOperatorSessions` (PostgreSQL as the runtime's
 * non-owner role, a fresh tenant per test, the database's clock: time passes there by really
 * waiting, so the idle limits below are short). The same vectors run against both: a session
 * is found with the same CSRF token, `alive` does not count as use, a logout ends it, an
 * unknown id is no session, idleness ends it, and the least recently used goes first.
 */
import assert from "node:assert/strict";
import { OperatorSessions, type OperatorSessionStore } from "../../ui/operator_sessions.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { PgDatabase } from "./pg_database.ts";
import { PgOperatorSessions } from "./pg_operator_sessions.ts";
import { addTenant } from "./pg_tenants.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
const app = await PgDatabase.open({ url: pg.appUrl });
let tenants = 0;

interface Options {
  idleMs?: number;
  max?: number;
}

interface Opened {
  store: OperatorSessionStore;
  /** Lets `ms` pass on the store's clock (the memory store's is moved; PostgreSQL's waited). */
  advance(ms: number): Promise<void>;
}

interface Adapter {
  name: string;
  open(options?: Options): Promise<Opened>;
}

const ADAPTERS: Adapter[] = [
  {
    name: "memory",
    open(options) {
      let clock = Date.now();
      return Promise.resolve({
        store: new OperatorSessions({ ...options, now: () => clock }),
        advance: (ms) => {
          clock += ms;
          return Promise.resolve();
        },
      });
    },
  },
  {
    name: "postgres",
    async open(options) {
      const tenant = `sessions-${++tenants}`;
      await addTenant(owner, tenant);
      // Met by its shape: runtime/store/ may not import ui/, so the port is checked here too.
      const store: OperatorSessionStore = new PgOperatorSessions(app, tenant, options);
      return { store, advance: (ms) => new Promise((res) => setTimeout(res, ms)) };
    },
  },
];

for (const adapter of ADAPTERS) {
  const test = (name: string, fn: () => Promise<void>) =>
    Deno.test(`OperatorSessionStore (${adapter.name}): ${name}`, fn);

  test("a created session is found by touch with the same id and CSRF token", async () => {
    const { store, advance } = await adapter.open();
    const s = await store.create();
    assert.ok(s);
    assert.match(s.id, /^[A-Za-z0-9_-]{32,}$/);
    assert.match(s.csrf, /^[A-Za-z0-9_-]{32,}$/);
    assert.notEqual(s.csrf, s.id);
    assert.equal(typeof s.lastSeen, "number");
    await advance(10);
    const touched = await store.touch(s.id);
    assert.ok(touched);
    assert.equal(touched.id, s.id);
    assert.equal(touched.csrf, s.csrf, "the same CSRF token on every touch");
    assert.ok(touched.lastSeen >= s.lastSeen, "the idle clock restarted, never went back");
    assert.equal((await store.touch(s.id))?.csrf, s.csrf);
    const other = await store.create();
    assert.ok(other);
    assert.notEqual(other.id, s.id);
    assert.notEqual(other.csrf, s.csrf);
  });

  test("alive answers without touching", async () => {
    const { store } = await adapter.open();
    const s = await store.create();
    assert.ok(s);
    assert.equal(await store.alive(s.id), true);
    assert.equal(await store.alive(s.id), true);
    assert.ok(await store.touch(s.id), "still there after being asked");
  });

  test("end: touch finds nothing and alive is false; ending again is no error; others live on", async () => {
    const { store } = await adapter.open();
    const s = await store.create();
    const other = await store.create();
    assert.ok(s && other);
    assert.equal(await store.end(s.id), true);
    assert.equal(await store.touch(s.id), undefined);
    assert.equal(await store.alive(s.id), false);
    assert.equal(await store.end(s.id), true, "ending an ended session");
    assert.equal(await store.touch(s.id), undefined);
    assert.ok(await store.touch(other.id), "the other session lives on");
    assert.equal(await store.alive(other.id), true);
  });

  test("an unknown, empty, undefined or oversized id is no session", async () => {
    const { store } = await adapter.open();
    const s = await store.create();
    assert.ok(s);
    for (const id of [undefined, "", "forged", crypto.randomUUID(), "x".repeat(10_000)]) {
      assert.equal(await store.touch(id), undefined, String(id).slice(0, 20));
      assert.equal(await store.alive(id), false, String(id).slice(0, 20));
    }
    // A near miss of a live id is no session either.
    assert.equal(await store.touch(s.id.slice(0, -1)), undefined);
    assert.equal(await store.touch(s.id + "A"), undefined);
    assert.equal(await store.alive(s.id.slice(1)), false);
    assert.equal(await store.end("never-was"), true, "ending an unknown id");
    assert.ok(await store.touch(s.id), "the live one untouched by all that");
  });

  test("a session idle too long ends; touch restarts the idle clock, alive does not", async () => {
    // 1 s idle, 600 ms steps: 200 ms of margin past the limit, 400 ms before it.
    const { store, advance } = await adapter.open({ idleMs: 1_000 });
    const asked = await store.create();
    const used = await store.create();
    assert.ok(asked && used);
    await advance(600);
    assert.equal(await store.alive(asked.id), true, "600 ms idle: alive");
    assert.ok(await store.touch(used.id), "600 ms idle: touched");
    await advance(600);
    // `asked` was only asked about: 1.2 s since its last use.
    assert.equal(await store.touch(asked.id), undefined, "1.2 s idle: gone");
    assert.equal(await store.alive(asked.id), false);
    // `used` was touched 600 ms ago.
    assert.equal(await store.alive(used.id), true, "touched 600 ms ago: alive");
    const again = await store.touch(used.id);
    assert.ok(again);
    assert.equal(again.csrf, used.csrf);
  });

  test("at most max sessions: the least recently used goes first", async () => {
    const { store, advance } = await adapter.open({ max: 2 });
    const a = await store.create();
    await advance(20);
    const b = await store.create();
    await advance(20);
    assert.ok(a && b);
    assert.ok(await store.touch(a.id), "a is now the most recently used");
    await advance(20);
    const c = await store.create();
    assert.ok(c);
    assert.equal(await store.alive(b.id), false, "b, least recently used, is gone");
    assert.equal(await store.touch(b.id), undefined);
    assert.ok(await store.touch(a.id));
    assert.ok(await store.touch(c.id));
  });
}

Deno.test(clusterTeardown("OperatorSessionStore contract", pg, app, owner));
