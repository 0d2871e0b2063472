/**
 * Approvals across runtimes in a real PostgreSQL: posted on one runtime (its own pool, as a
 * second process would have), decided on another, heard by the first within a second;
 * exactly one of racing outcomes wins; a decided approval stays decided; tenants are walled.
 */
import assert from "node:assert/strict";
import { PgDatabase } from "../store/pg_database.ts";
import { addTenant } from "../store/pg_tenants.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { pendingApproval } from "../../tests/helpers/approvals.ts";
import { PgApprovalBoard } from "./pg_approval_board.ts";
import type { Approval } from "./approval_queue.ts";
import { ANSWER_BOUND_MS } from "../../tests/helpers/until.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
await addTenant(owner, "acme");
await addTenant(owner, "globex");

const pending = (seconds = 60) => pendingApproval(seconds);

/** Two runtimes: a pool and a board each. */
async function runtimes(tenant = "acme", pollMs?: number) {
  const dbs = await Promise.all([0, 1, 2].map(() => PgDatabase.open({ url: pg.appUrl, max: 4 })));
  const boards = await Promise.all(
    dbs.map((db, i) => PgApprovalBoard.open(db, tenant, { runtime: `rt-${i}`, pollMs })),
  );
  return {
    a: boards[0],
    b: boards[1],
    c: boards[2],
    async [Symbol.asyncDispose]() {
      for (const board of boards) await board[Symbol.asyncDispose]();
      for (const db of dbs) await db[Symbol.asyncDispose]();
    },
  };
}

Deno.test("PgApprovalBoard: posted on A, listed and approved on B, heard on A within a second; a second decision is not_pending", async () => {
  await using r = await runtimes();
  const record = pending();
  await r.a.post(record);
  const listed = await r.b.list();
  assert.ok(listed.some((x) => x.id === record.id && x.state === "pending"));
  assert.deepEqual((await r.b.get(record.id))?.request, record.request, "the exact request");
  const heard = r.a.settled(record.id);
  const t0 = performance.now();
  assert.equal(await r.b.decide(record.id, "approve", "console"), "ok");
  const settled = await heard;
  const ms = performance.now() - t0;
  assert.equal(settled.state, "approved");
  assert.equal(settled.decided_by, "console");
  // Heard (by notification or the board's poll); the bound is a loaded machine's (until.ts).
  assert.ok(ms < ANSWER_BOUND_MS, `heard after ${ms} ms`);
  assert.equal(await r.c.decide(record.id, "deny", "api"), "not_pending");
  assert.equal(await r.c.decide(crypto.randomUUID(), "deny", "api"), "unknown");
  assert.equal(await r.a.finish(record.id, "expired"), false, "a decided approval stays decided");
  assert.equal((await r.a.get(record.id))?.state, "approved");
});

Deno.test("PgApprovalBoard: of racing outcomes (approve on B, deny on C, the poster's timeout on A) exactly one wins", async () => {
  await using r = await runtimes();
  for (let round = 0; round < 20; round++) {
    const record = pending();
    await r.a.post(record);
    const [approve, deny, expire] = await Promise.all([
      r.b.decide(record.id, "approve", "console"),
      r.c.decide(record.id, "deny", "api"),
      r.a.finish(record.id, "expired"),
    ]);
    const wins = [approve === "ok", deny === "ok", expire].filter(Boolean).length;
    assert.equal(wins, 1, `round ${round}: ${approve} ${deny} ${expire}`);
    const final = (await r.a.get(record.id))!.state;
    assert.equal(
      final,
      approve === "ok" ? "approved" : deny === "ok" ? "denied" : "expired",
      `round ${round}`,
    );
  }
});

Deno.test("PgApprovalBoard: an approval past its time cannot be approved; a withdrawn one neither", async () => {
  await using r = await runtimes();
  const late = pending(-1);
  await r.a.post(late);
  assert.equal(await r.b.decide(late.id, "approve", "console"), "not_pending");
  const gone = pending();
  await r.a.post(gone);
  assert.equal(await r.a.finish(gone.id, "withdrawn"), true);
  assert.equal(await r.b.decide(gone.id, "approve", "console"), "not_pending");
  assert.equal((await r.b.get(gone.id))?.state, "withdrawn");
});

Deno.test("PgApprovalBoard: tenants are walled: another tenant neither lists, reads nor decides", async () => {
  await using acme = await runtimes("acme");
  await using globex = await runtimes("globex");
  const record = pending();
  await acme.a.post(record);
  assert.ok(!(await globex.b.list()).some((x) => x.id === record.id));
  assert.equal(await globex.b.get(record.id), undefined);
  assert.equal(await globex.b.decide(record.id, "approve", "console"), "unknown");
  assert.equal((await acme.b.get(record.id))?.state, "pending");
});

Deno.test("PgApprovalBoard: a change made without a notification is still heard, by the poll", async () => {
  await using r = await runtimes("acme", 100);
  const record = pending();
  await r.a.post(record);
  const heard = r.a.settled(record.id);
  // The owner decides behind the boards' backs: no NOTIFY.
  await owner.transaction((tx) =>
    tx`UPDATE approvals SET state = 'denied', decided_at = now(), decided_by = 'owner'
      WHERE id = ${record.id}`
  );
  assert.equal((await heard).state, "denied");
  // And a waiting call that goes away stops waiting.
  const other = pending();
  await r.a.post(other);
  const abort = new AbortController();
  const waiting = r.a.settled(other.id, abort.signal);
  abort.abort();
  await assert.rejects(waiting);
});

Deno.test("PgApprovalBoard: only a pending approval's outcome may change, even for the owner", async () => {
  await using r = await runtimes();
  const record = pending();
  await r.a.post(record);
  await assert.rejects(
    owner.transaction((tx) =>
      tx`UPDATE approvals SET request = '{"method":"GET"}' WHERE id = ${record.id}`
    ),
    /APPROVAL_FINAL/,
  );
  await r.b.decide(record.id, "deny", "console");
  await assert.rejects(
    owner.transaction((tx) => tx`UPDATE approvals SET state = 'approved' WHERE id = ${record.id}`),
    /APPROVAL_FINAL/,
  );
});

Deno.test("PgApprovalBoard: an approval past its time is not listed as pending, and a runtime waiting on it ends it as expired", async () => {
  await using r = await runtimes();
  const late = pending(1);
  await r.a.post(late);
  assert.ok((await r.b.list()).some((x) => x.id === late.id));
  await new Promise((res) => setTimeout(res, 1_100));
  assert.ok(!(await r.b.list()).some((x) => x.id === late.id), "no longer pending in the list");
  // Its poster is gone: whoever waits ends it, and the waiting ends.
  assert.equal((await r.c.settled(late.id)).state, "expired");
});

Deno.test("PgApprovalBoard: a row whose held request is not a RequestView (any runtime of the tenant could write one) is skipped, not a failing console", async () => {
  await using r = await runtimes();
  const good = pending();
  await r.a.post(good);
  const bad = {
    ...pending(),
    request: "https://shop.example.test/pay" as unknown as Approval["request"],
  };
  await r.a.post(bad);
  const listed = await r.b.list();
  assert.ok(listed.some((x) => x.id === good.id));
  assert.ok(!listed.some((x) => x.id === bad.id), "the malformed row is not listed");
  assert.equal(await r.b.get(bad.id), undefined);
});

Deno.test("PgApprovalBoard.unrun: an approval whose call did not run becomes denied, once; nothing else leaves a final state", async () => {
  await using r = await runtimes();
  const record = pending();
  await r.a.post(record);
  assert.equal(await r.a.unrun(record.id), false, "a pending one is not approved");
  assert.equal(await r.b.decide(record.id, "approve", "api"), "ok");
  assert.equal(await r.a.unrun(record.id), true);
  const after = await r.b.get(record.id);
  assert.equal(after?.state, "denied");
  assert.equal(after?.decided_by, "audit-unavailable");
  assert.equal(await r.a.unrun(record.id), false, "once");
  // Any other move out of a final state is still refused, for the runtime's role too.
  const other = pending();
  await r.a.post(other);
  assert.equal(await r.b.decide(other.id, "approve", "api"), "ok");
  const app = await PgDatabase.open({ url: pg.appUrl });
  try {
    await assert.rejects(
      app.tenant(
        "acme",
        (tx) =>
          tx`UPDATE approvals SET state = 'denied', decided_by = 'console' WHERE id = ${other.id}`,
      ),
      /APPROVAL_FINAL|23514/,
    );
    await assert.rejects(
      app.tenant(
        "acme",
        (tx) =>
          tx`UPDATE approvals SET state = 'pending', decided_by = 'audit-unavailable'
          WHERE id = ${other.id}`,
      ),
      /APPROVAL_FINAL|23514/,
    );
  } finally {
    await app[Symbol.asyncDispose]();
  }
  assert.equal((await r.a.get(other.id))?.state, "approved");
});

Deno.test(clusterTeardown("PgApprovalBoard tests", pg, owner));
