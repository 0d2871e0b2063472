/**
 * One contract for the live sessions' `LiveSessionStore`: the embedded `MemoryLiveSessions`
 * and `PgLiveSessions` (PostgreSQL as the runtime's non-owner role, a fresh pair of tenants
 * per test, the database's clock). The same vectors run against both, from one runtime's
 * side (`cli/live_mirror.ts` writes through it, the console reads and kills through it): a
 * session opened is listed as this runtime's, updated, ordered, walled to its tenant, ended,
 * killed and read back as killed, kept fresh by the heartbeat and swept.
 *
 * Known difference: a runtime whose heartbeat lapsed shows its sessions as gone on
 * PostgreSQL; the embedded store has one runtime, whose sessions are never gone. The vector
 * that lapses asserts each side of it. (What one runtime may not do to another's rows is
 * PostgreSQL's alone: `pg_live_sessions_test.ts`.)
 */
import assert from "node:assert/strict";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { type LiveSessionStore, MemoryLiveSessions } from "./live_sessions.ts";
import { PgDatabase } from "./pg_database.ts";
import { PgLiveSessions } from "./pg_live_sessions.ts";
import { addTenant } from "./pg_tenants.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
const app = await PgDatabase.open({ url: pg.appUrl });
let tenants = 0;

interface Opened {
  store: LiveSessionStore;
  /** The tenant the vectors work in. */
  tenant: string;
  /** Another tenant, whose sessions are not the first one's. */
  other: string;
  /** Whether a lapsed heartbeat shows as gone (the known difference). */
  lapses: boolean;
}

interface Adapter {
  name: string;
  /** `lapseMs`: how long a heartbeat may lapse before the store shows its sessions as gone. */
  open(options?: { lapseMs?: number }): Promise<Opened>;
}

const ADAPTERS: Adapter[] = [
  {
    name: "memory",
    open() {
      return Promise.resolve({
        store: new MemoryLiveSessions({ name: "runtime-0a1b2c3d" }),
        tenant: "default",
        other: "globex",
        lapses: false,
      });
    },
  },
  {
    name: "postgres",
    async open(options) {
      const n = ++tenants;
      const [tenant, other] = [`live-${n}`, `live-${n}-other`];
      for (const t of [tenant, other]) await addTenant(owner, t);
      const store = new PgLiveSessions(app, {
        name: "runtime-0a1b2c3d",
        secret: crypto.randomUUID(),
        lapseMs: options?.lapseMs,
      });
      return { store, tenant, other, lapses: true };
    },
  },
];

const at = (ms: number) => new Date(Date.UTC(2030, 0, 1, 12, 0, 0, ms)).toISOString();

/** A session as it opens (`n` orders its start). */
const session = (id: string, n = 0, agent: string | null = "ada") => ({
  id,
  agent,
  isolation: "netns",
  startedAt: at(n),
});

const ids = async (store: LiveSessionStore, tenant: string) =>
  (await store.list(tenant)).map((s) => s.id);

const wait = (ms: number) => new Promise((res) => setTimeout(res, ms));

for (const adapter of ADAPTERS) {
  const test = (name: string, fn: () => Promise<void>) =>
    Deno.test(`LiveSessionStore (${adapter.name}): ${name}`, fn);

  test("an opened session is listed as this runtime's, fresh, with nothing done yet", async () => {
    const { store, tenant } = await adapter.open();
    const before = Date.now();
    await store.open(tenant, session("s-a1", 5));
    await store.open(tenant, session("s-b2", 6, null));
    const [a, b] = await store.list(tenant);
    const { heartbeatAt, ...rest } = a;
    assert.deepEqual(rest, {
      id: "s-a1",
      runtime: store.runtime,
      agent: "ada",
      origin: null,
      actionsUsed: 0,
      tainted: false,
      isolation: "netns",
      startedAt: at(5),
      gone: false,
    });
    // The database's clock or this process's: within a few seconds of each other.
    assert.ok(Math.abs(Date.parse(heartbeatAt) - before) < 5_000, heartbeatAt);
    assert.equal(b.id, "s-b2");
    assert.equal(b.agent, null, "a session without an agent's name");
  });

  test("update changes what is shown of a session; an unknown one is not updated", async () => {
    const { store, tenant } = await adapter.open();
    await store.open(tenant, session("s-a1"));
    const change = { origin: "https://shop.test", actionsUsed: 3, tainted: true };
    assert.equal(await store.update(tenant, "s-a1", change), true);
    const [s] = await store.list(tenant);
    assert.deepEqual([s.origin, s.actionsUsed, s.tainted], ["https://shop.test", 3, true]);
    assert.equal(
      await store.update(tenant, "s-a1", { origin: null, actionsUsed: 4, tainted: true }),
      true,
    );
    assert.deepEqual(
      (await store.list(tenant)).map((s) => [s.origin, s.actionsUsed]),
      [[null, 4]],
      "an origin can go back to none",
    );
    assert.equal(await store.update(tenant, "s-unknown", change), false);
    assert.deepEqual(await ids(store, tenant), ["s-a1"], "nothing was made by it");
  });

  test("oldest first, by start then id; only the tenant's sessions", async () => {
    const { store, tenant, other } = await adapter.open();
    await store.open(tenant, session("s-c", 20));
    await store.open(tenant, session("s-b", 10));
    await store.open(tenant, session("s-a", 20));
    await store.open(other, session("s-x", 0, "gina"));
    assert.deepEqual(await ids(store, tenant), ["s-b", "s-a", "s-c"]);
    assert.deepEqual(await ids(store, other), ["s-x"]);
    // A console of this tenant cannot kill the other tenant's session. (Update and end reach
    // this runtime's own sessions, of the one tenant it serves: PostgreSQL finds them by the
    // runtime's secret and id, so they are not asserted across tenants here.)
    assert.equal(await store.kill(tenant, "s-x"), false);
    assert.deepEqual(await store.killed(), []);
    assert.equal(await store.kill(other, "s-x"), true, "its own tenant's console can");
    assert.deepEqual(await store.killed(), ["s-x"]);
  });

  test("a session id is opened once", async () => {
    const { store, tenant } = await adapter.open();
    await store.open(tenant, session("s-a1"));
    await assert.rejects(store.open(tenant, session("s-a1", 1, "bob")));
    const [s] = await store.list(tenant);
    assert.equal(s.agent, "ada", "the first stands");
  });

  test("end removes a session; ending it again or an unknown one is false; others remain", async () => {
    const { store, tenant } = await adapter.open();
    await store.open(tenant, session("s-a1", 1));
    await store.open(tenant, session("s-b2", 2));
    assert.equal(await store.end(tenant, "s-a1"), true);
    assert.deepEqual(await ids(store, tenant), ["s-b2"]);
    assert.equal(await store.end(tenant, "s-a1"), false, "ended twice");
    assert.equal(await store.end(tenant, "s-never"), false);
    assert.equal(
      await store.update(tenant, "s-a1", { origin: null, actionsUsed: 1, tainted: false }),
      false,
      "an ended session is not updated",
    );
    assert.deepEqual(await ids(store, tenant), ["s-b2"]);
  });

  test("kill marks a session; this runtime reads the mark until the session ends", async () => {
    const { store, tenant } = await adapter.open();
    await store.open(tenant, session("s-a1", 1));
    await store.open(tenant, session("s-b2", 2));
    assert.deepEqual(await store.killed(), [], "nothing asked yet");
    assert.equal(await store.kill(tenant, "s-a1"), true);
    assert.equal(await store.kill(tenant, "s-never"), false, "unknown id");
    assert.deepEqual(await store.killed(), ["s-a1"]);
    assert.deepEqual(await store.killed(), ["s-a1"], "read again: still asked");
    assert.deepEqual(await ids(store, tenant), ["s-a1", "s-b2"], "still listed until it ends");
    assert.equal(await store.kill(tenant, "s-a1"), true, "killing it twice");
    assert.equal(await store.kill(tenant, "s-b2"), true);
    assert.deepEqual((await store.killed()).sort(), ["s-a1", "s-b2"]);
    assert.equal(await store.end(tenant, "s-a1"), true);
    assert.deepEqual(await store.killed(), ["s-b2"]);
    assert.equal(await store.end(tenant, "s-b2"), true);
    assert.deepEqual(await store.killed(), []);
    assert.equal(await store.kill(tenant, "s-a1"), false, "an ended session is not killed");
  });

  test("heartbeat counts this runtime's sessions; sweep removes them all and counts them", async () => {
    const { store, tenant } = await adapter.open();
    assert.equal(await store.heartbeat(), 0);
    assert.equal(await store.sweep(), 0);
    await store.open(tenant, session("s-a1", 1));
    await store.open(tenant, session("s-b2", 2));
    await store.kill(tenant, "s-b2");
    assert.equal(await store.heartbeat(), 2);
    assert.equal(await store.sweep(), 2);
    assert.deepEqual(await store.list(tenant), []);
    assert.deepEqual(await store.killed(), [], "a swept session's mark goes with it");
    assert.equal(await store.heartbeat(), 0);
    await store.open(tenant, session("s-a1", 1));
    assert.deepEqual(await ids(store, tenant), ["s-a1"], "its id can be opened again");
  });

  test("a lapsed heartbeat: gone on PostgreSQL, never on the embedded store; a beat makes it fresh again", async () => {
    // 300 ms lapse, 600 ms without a beat.
    const { store, tenant, lapses } = await adapter.open({ lapseMs: 300 });
    await store.open(tenant, session("s-a1"));
    assert.equal((await store.list(tenant))[0].gone, false, "fresh");
    await wait(600);
    // The known difference: one runtime of the embedded store is never gone to itself.
    assert.equal((await store.list(tenant))[0].gone, lapses, "lapsed");
    assert.equal(await store.heartbeat(), 1);
    assert.equal((await store.list(tenant))[0].gone, false, "beating again");
    await wait(600);
    assert.equal(
      await store.update(tenant, "s-a1", { origin: null, actionsUsed: 1, tainted: false }),
      true,
    );
    assert.equal((await store.list(tenant))[0].gone, false, "an update is a beat too");
  });
}

Deno.test(clusterTeardown("LiveSessionStore contract", pg, app, owner));
