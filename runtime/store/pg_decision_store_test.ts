/**
 * What only the PostgreSQL decision store does, beyond the port's contract
 * (`decision_store_contract_test.ts`): tenants are walled; the tables' triggers keep a finished
 * record finished, even for the owner, and let a runtime's role undo nothing but an acted-on
 * outcome; a row whose held request is malformed (any runtime of the tenant could write one)
 * is skipped, not a failing console; a notification that names no id of ours is ignored.
 */
import assert from "node:assert/strict";
import { pendingApproval } from "../../tests/helpers/approvals.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import type { Approval } from "./decision_store.ts";
import { PgDatabase } from "./pg_database.ts";
import { DECISION_CHANNELS, PgDecisionStore } from "./pg_decision_store.ts";
import { addTenant } from "./pg_tenants.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
await addTenant(owner, "acme");
await addTenant(owner, "globex");
const app = await PgDatabase.open({ url: pg.appUrl });

async function approvals(tenant: string, runtime = "rt-1") {
  return await PgDecisionStore.open(app, tenant, "approval", { runtime });
}

Deno.test("PgDecisionStore: tenants are walled: another tenant neither lists, reads nor decides", async () => {
  await using acme = await approvals("acme");
  await using globex = await approvals("globex");
  const record = pendingApproval();
  await acme.post(record);
  assert.ok(!(await globex.list("pending")).some((x) => x.id === record.id));
  assert.equal(await globex.get(record.id), undefined);
  assert.equal(await globex.decide(record.id, { state: "approved", by: "console" }), "unknown");
  assert.equal(await globex.end(record.id, "withdrawn"), false);
  assert.equal(await globex.unrun(record.id), false);
  assert.equal((await acme.get(record.id))?.state, "pending");
});

Deno.test("PgDecisionStore: only a pending approval's outcome may change, even for the owner", async () => {
  await using store = await approvals("acme");
  const record = pendingApproval();
  await store.post(record);
  await assert.rejects(
    owner.transaction((tx) =>
      tx`UPDATE approvals SET request = '{"method":"GET"}' WHERE id = ${record.id}`
    ),
    /APPROVAL_FINAL/,
  );
  await store.decide(record.id, { state: "denied", by: "console" });
  await assert.rejects(
    owner.transaction((tx) => tx`UPDATE approvals SET state = 'approved' WHERE id = ${record.id}`),
    /APPROVAL_FINAL/,
  );
});

Deno.test("PgDecisionStore: a row whose held request is not a RequestView is skipped, not a failing console", async () => {
  await using store = await approvals("acme");
  const good = pendingApproval();
  await store.post(good);
  const bad = {
    ...pendingApproval(),
    request: "https://shop.example.test/pay" as unknown as Approval["request"],
  };
  await store.post(bad);
  const listed = await store.list("pending");
  assert.ok(listed.some((x) => x.id === good.id));
  assert.ok(!listed.some((x) => x.id === bad.id), "the malformed row is not listed");
  assert.equal(await store.get(bad.id), undefined);
});

Deno.test("PgDecisionStore.unrun: nothing else leaves a final state, for the runtime's role either", async () => {
  await using store = await approvals("acme");
  const other = pendingApproval();
  await store.post(other);
  assert.equal(await store.decide(other.id, { state: "approved", by: "api" }), "ok");
  for (
    const set of [
      `state = 'denied', decided_by = 'console'`,
      `state = 'pending', decided_by = 'audit-unavailable'`,
    ]
  ) {
    await assert.rejects(
      app.tenant("acme", (tx) => tx.unsafe(`UPDATE approvals SET ${set} WHERE id = '${other.id}'`)),
      /APPROVAL_FINAL|23514/,
    );
  }
  assert.equal((await store.get(other.id))?.state, "approved");
});

Deno.test("PgDecisionStore.listen: a notification that names no id of ours is ignored; another kind's channel is not heard", async () => {
  await using store = await approvals("acme");
  await using questions = await PgDecisionStore.open(app, "acme", "question", { runtime: "rt-1" });
  const heard: string[] = [];
  const stop = store.listen((id) => heard.push(id));
  const record = pendingApproval();
  try {
    await owner.transaction(async (tx) => {
      await tx`SELECT pg_notify(${DECISION_CHANNELS.approval}, ${"x".repeat(500)})`;
      await tx`SELECT pg_notify(${DECISION_CHANNELS.approval}, ${"a b"})`;
      await tx`SELECT pg_notify(${DECISION_CHANNELS.question}, ${record.id})`;
    });
    await store.post(record);
    const until = Date.now() + 10_000;
    while (heard.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(heard, [record.id]);
  } finally {
    stop();
  }
  assert.equal(await questions.get(record.id), undefined, "an approval is not a question");
});

Deno.test(clusterTeardown("PgDecisionStore tests", pg, app, owner));
