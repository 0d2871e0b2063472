/**
 * The console's live sessions and the mirror's beat over a `LiveSessionStore`, the same way
 * on either store: here the embedded one (`MemoryLiveSessions`), and one that also holds
 * another runtime's row, as the shared store does (`live_sessions_contract_test.ts` runs the
 * store's own vectors over both adapters; tests/shared_store_test.ts the two runtimes).
 */
import assert from "node:assert/strict";
import { SessionState } from "../browser/session_state.ts";
import {
  type LiveSession,
  type LiveSessionStore,
  MemoryLiveSessions,
} from "../store/live_sessions.ts";
import { mirrorLiveSessions } from "./live_mirror.ts";
import { type ConsoleSession, sessionsPort } from "./operator_console.ts";

const TENANT = "default";

/** A session as the console and the mirror see it; disposing it leaves the map. */
class FakeSession implements ConsoleSession {
  readonly id: string;
  agent: string | null = "ada";
  readonly isolation = "none" as const;
  readonly state = new SessionState(Date.UTC(2030, 0, 1));
  origin: string | null = null;
  disposed = 0;
  readonly #live: Map<string, FakeSession>;

  constructor(id: string, live: Map<string, FakeSession>) {
    this.id = id;
    this.#live = live;
    live.set(id, this);
  }

  currentOrigin(): string | null {
    return this.origin;
  }

  [Symbol.asyncDispose](): Promise<void> {
    this.disposed++;
    this.#live.delete(this.id);
    return Promise.resolve();
  }
}

/** This runtime's sessions, its store, the console's port and a mirror beaten by hand. */
function world(store: LiveSessionStore = new MemoryLiveSessions({ name: "runtime-here" })) {
  const live = new Map<string, FakeSession>();
  const port = sessionsPort({ live, store, tenant: TENANT });
  const mirror = mirrorLiveSessions({ live, store, tenant: TENANT, beatMs: 60_000 });
  return { live, store, port, mirror };
}

Deno.test("live sessions (embedded): the console lists a session at once, with its activity, and once after beats", async () => {
  const w = world();
  await using _ = w.mirror;
  const s = new FakeSession("s-1", w.live);
  s.state.setActivity("capture: step 2 of 5");
  s.state.countAction();
  const listed = await w.port.list();
  assert.deepEqual(listed, [{
    id: "s-1",
    agent: "ada",
    origin: null,
    actionsUsed: 1,
    tainted: false,
    isolation: "none",
    startedAt: "2030-01-01T00:00:00.000Z",
    activity: "capture: step 2 of 5",
  }], "before any beat: this runtime's own, no runtime named, never gone");
  await w.mirror.beat();
  s.origin = "https://shop.test";
  s.state.taint("login");
  const [row] = await w.store.list(TENANT);
  assert.equal(row.runtime, "runtime-here", "the beat wrote its row");
  const after = await w.port.list();
  assert.equal(after.length, 1, "the row and the session are one");
  assert.deepEqual(
    [after[0].origin, after[0].tainted, after[0].activity, after[0].runtime],
    ["https://shop.test", true, "capture: step 2 of 5", undefined],
    "as the session is now, not as the last beat wrote it",
  );
  await w.mirror.beat();
  const [updated] = await w.store.list(TENANT);
  assert.deepEqual([updated.origin, updated.actionsUsed, updated.tainted], [
    "https://shop.test",
    1,
    true,
  ]);
});

Deno.test("live sessions (embedded): a session that ended since the last beat is not listed; the beat ends its row", async () => {
  const w = world();
  await using _ = w.mirror;
  const s = new FakeSession("s-1", w.live);
  new FakeSession("s-2", w.live);
  await w.mirror.beat();
  w.live.delete(s.id);
  assert.deepEqual((await w.port.list()).map((x) => x.id), ["s-2"]);
  assert.equal((await w.store.list(TENANT)).length, 2, "its row until the beat");
  await w.mirror.beat();
  assert.deepEqual((await w.store.list(TENANT)).map((x) => x.id), ["s-2"]);
});

Deno.test("live sessions (embedded): a kill from the console ends this runtime's session at once", async () => {
  const w = world();
  await using _ = w.mirror;
  const s = new FakeSession("s-1", w.live);
  await w.mirror.beat();
  assert.equal(await w.port.kill("s-1"), true);
  assert.equal(s.disposed, 1);
  assert.deepEqual(await w.port.list(), []);
  await w.mirror.beat();
  assert.deepEqual(await w.store.list(TENANT), [], "its row ended at the next beat");
  assert.equal(await w.port.kill("s-1"), false, "no such session any more");
  assert.equal(await w.port.kill("s-never"), false);
});

Deno.test("live sessions (embedded): a kill marked in the store ends the session at the next beat", async () => {
  const w = world();
  await using _ = w.mirror;
  const s = new FakeSession("s-1", w.live);
  await w.mirror.beat();
  assert.equal(await w.store.kill(TENANT, "s-1"), true);
  await w.mirror.beat();
  assert.equal(s.disposed, 1, "ended here, where its browser is");
  await w.mirror.beat();
  assert.deepEqual(await w.store.list(TENANT), []);
  assert.deepEqual(await w.store.killed(), []);
});

Deno.test("live sessions: the mirror's end removes this runtime's rows", async () => {
  const w = world();
  new FakeSession("s-1", w.live);
  await w.mirror.beat();
  await w.mirror[Symbol.asyncDispose]();
  assert.deepEqual(await w.store.list(TENANT), []);
});

/** The embedded store plus one session of another runtime, as a shared store lists it. */
class WithAnotherRuntime extends MemoryLiveSessions {
  readonly kills: string[] = [];
  readonly theirs: LiveSession = {
    id: "s-theirs",
    runtime: "runtime-there",
    agent: "bob",
    origin: "https://a.test",
    actionsUsed: 2,
    tainted: true,
    isolation: "netns",
    startedAt: "2029-12-31T00:00:00.000Z",
    heartbeatAt: "2029-12-31T00:00:00.000Z",
    gone: true,
  };

  override async list(tenant: string): Promise<LiveSession[]> {
    return [this.theirs, ...await super.list(tenant)];
  }

  override kill(tenant: string, id: string): Promise<boolean> {
    if (id !== this.theirs.id) return super.kill(tenant, id);
    this.kills.push(id);
    return Promise.resolve(true);
  }
}

Deno.test("live sessions (shared): another runtime's sessions are listed with their runtime and gone; a kill marks them", async () => {
  const store = new WithAnotherRuntime({ name: "runtime-here" });
  const w = world(store);
  await using _ = w.mirror;
  const s = new FakeSession("s-1", w.live);
  await w.mirror.beat();
  assert.deepEqual(await w.port.list(), [
    {
      id: "s-theirs",
      agent: "bob",
      origin: "https://a.test",
      actionsUsed: 2,
      tainted: true,
      isolation: "netns",
      startedAt: "2029-12-31T00:00:00.000Z",
      runtime: "runtime-there",
      gone: true,
    },
    {
      id: "s-1",
      agent: "ada",
      origin: null,
      actionsUsed: 0,
      tainted: false,
      isolation: "none",
      startedAt: "2030-01-01T00:00:00.000Z",
    },
  ], "oldest first; this runtime's as it is now");
  assert.equal(await w.port.kill("s-theirs"), true);
  assert.deepEqual(store.kills, ["s-theirs"], "marked for its runtime");
  assert.equal(s.disposed, 0, "nothing of this runtime's ended");
});
