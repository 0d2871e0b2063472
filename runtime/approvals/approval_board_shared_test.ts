/**
 * Approvals shared across runtimes in a real PostgreSQL, through `ApprovalBoard` over a
 * `PgDecisionStore`: each runtime has its own pool, store and board (as separate processes
 * would have; `tests/helpers/decision_boards.ts`), so a confirm raised on A is listed on B, decided there, and A's waiting call answers within a second
 * and writes the outcome's one audit row; timeouts, withdrawals, racing decisions, a failing
 * audit and a stopped database all end closed; tenants are walled.
 */
import { ANSWER_BOUND_MS, until } from "../../tests/helpers/until.ts";
import {
  approvalRow,
  onlyListed,
  onlyPending,
  sharedRuntimes,
} from "../../tests/helpers/decision_boards.ts";
import assert from "node:assert/strict";
import type { ApprovalOutcome } from "../gate/approver.ts";
import { PgDatabase } from "../store/pg_database.ts";
import {
  clientFaultsTolerated,
  clusterTeardown,
  startPostgres,
} from "../../tests/helpers/postgres.ts";
import { pending } from "../../tests/helpers/pending_approval.ts";
import { ApprovalBoard, type ApprovalEvent } from "./approval_board.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();

/** `n` runtimes of a tenant (a fresh one by default), each with its own pool and board. */
function runtimes(n: number, options: { tenant?: string; pollMs?: number } = {}) {
  return sharedRuntimes<"approval", ApprovalBoard, ApprovalEvent>(
    { appUrl: pg.appUrl, owner },
    "approval",
    n,
    (store, audit, o) => new ApprovalBoard(store, audit, o),
    options,
  );
}

Deno.test("ApprovalBoard (PostgreSQL): raised on A, listed on B, approved on B: A's call is approved within a second, one row on A", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const answer = a.board.request(pending());
  const listed = await onlyPending(b.board);
  assert.equal(listed.state, "pending");
  assert.equal(listed.agent, "alice");
  assert.equal(listed.origin, "https://bank.test");
  assert.equal(listed.method, "POST");
  assert.equal(listed.kind, "form");
  assert.deepEqual(listed.request, pending().details!.request, "the exact held request");
  assert.equal(Date.parse(listed.expires_at) - Date.parse(listed.created_at), 60_000);
  await until(() => b.events.some((e) => e.type === "added" && e.approval.id === listed.id));

  const t0 = performance.now();
  assert.equal(await b.board.decide(listed.id, "approve", "api"), "ok");
  assert.deepEqual(await answer, { outcome: "approved" });
  const ms = performance.now() - t0;
  // Heard through the database's notification; the bound is a loaded machine's (until.ts).
  assert.ok(ms < ANSWER_BOUND_MS, `A answered after ${ms} ms`);
  assert.deepEqual(a.audit.rows, [approvalRow("allow", "APPROVED", "api")]);
  assert.deepEqual(b.audit.rows, [], "only the waiting runtime writes the row");

  await until(() => b.events.some((e) => e.type === "decided"));
  const mine = b.events.filter((e) => e.approval.id === listed.id);
  assert.deepEqual(mine.map((e) => e.type), ["added", "decided"]);
  assert.equal(mine[1].approval.state, "approved");
  assert.equal(mine[1].approval.decided_by, "api");
  // A's own console heard the same, and both list it as decided now.
  await until(() => a.events.some((e) => e.type === "decided"));
  assert.deepEqual(await b.board.list("pending"), []);
  const [decided] = await a.board.list("decided");
  assert.equal(decided.id, listed.id);
  assert.equal(decided.state, "approved");
  assert.equal(await b.board.decide(listed.id, "deny", "console"), "not_pending");
  assert.equal(await b.board.decide(crypto.randomUUID(), "deny", "console"), "unknown");
});

Deno.test("ApprovalBoard (PostgreSQL): denied on B is CONFIRM_DENIED on A, with the deny row naming the door", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const answer = a.board.request(pending());
  const listed = await onlyPending(b.board);
  assert.equal(await b.board.decide(listed.id, "deny", "console"), "ok");
  assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_DENIED" });
  assert.deepEqual(a.audit.rows, [approvalRow("deny", "CONFIRM_DENIED", "console")]);
});

Deno.test("ApprovalBoard (PostgreSQL): unanswered, A's call times out, the row is expired, and a later decision on B is not_pending", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const answer = a.board.request(pending({ timeoutMs: 400 }));
  // Any state: on a loaded machine the 400 ms may run out before B first reads it.
  const listed = await onlyListed(b.board);
  assert.deepEqual(await answer, { outcome: "timeout" });
  assert.equal((await b.store.get(listed.id))?.state, "expired");
  assert.equal(await b.board.decide(listed.id, "approve", "console"), "not_pending");
  assert.deepEqual(a.audit.rows, [approvalRow("deny", "CONFIRM_TIMEOUT", null)]);
  await until(() => b.events.some((e) => e.type === "expired" && e.approval.id === listed.id));
});

Deno.test("ApprovalBoard (PostgreSQL): A's call going away withdraws it; B's decision is then not_pending", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const abort = new AbortController();
  const answer = a.board.request(pending(), abort.signal);
  const listed = await onlyPending(b.board);
  abort.abort();
  assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_WITHDRAWN" });
  assert.equal((await b.store.get(listed.id))?.state, "withdrawn");
  assert.equal(await b.board.decide(listed.id, "approve", "console"), "not_pending");
  assert.deepEqual(a.audit.rows, [approvalRow("event", "CONFIRM_WITHDRAWN", null)]);
  await until(() => b.events.some((e) => e.type === "withdrawn" && e.approval.id === listed.id));

  // A call gone before it was asked is never posted.
  const gone = new AbortController();
  gone.abort();
  assert.deepEqual(await a.board.request(pending(), gone.signal), {
    outcome: "denied",
    reason: "CONFIRM_WITHDRAWN",
  });
  assert.deepEqual(await b.board.list("pending"), []);
});

Deno.test("ApprovalBoard (PostgreSQL): of an approve on B and a deny on C at once exactly one wins, and A answers the winner", async () => {
  await using rt = await runtimes(3);
  const [a, b, c] = rt.list;
  for (let round = 0; round < 10; round++) {
    a.audit.rows.length = 0;
    const answer = a.board.request(pending());
    const listed = await onlyPending(b.board);
    const [approve, deny] = await Promise.all([
      b.board.decide(listed.id, "approve", "console"),
      c.board.decide(listed.id, "deny", "api"),
    ]);
    assert.equal([approve, deny].filter((x) => x === "ok").length, 1, `round ${round}`);
    assert.equal([approve, deny].filter((x) => x === "not_pending").length, 1, `round ${round}`);
    const outcome: ApprovalOutcome = await answer;
    if (approve === "ok") {
      assert.deepEqual(outcome, { outcome: "approved" });
      assert.deepEqual(a.audit.rows, [approvalRow("allow", "APPROVED", "console")]);
    } else {
      assert.deepEqual(outcome, { outcome: "denied", reason: "CONFIRM_DENIED" });
      assert.deepEqual(a.audit.rows, [approvalRow("deny", "CONFIRM_DENIED", "api")]);
    }
  }
});

Deno.test("ApprovalBoard (PostgreSQL): an approval whose audit row cannot be written is denied AUDIT_UNAVAILABLE", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  a.audit.failing = true;
  const answer = a.board.request(pending());
  const listed = await onlyPending(b.board);
  assert.equal(await b.board.decide(listed.id, "approve", "console"), "ok");
  assert.deepEqual(await answer, { outcome: "denied", reason: "AUDIT_UNAVAILABLE" });
  assert.deepEqual(a.audit.rows, []);
});

Deno.test("ApprovalBoard (PostgreSQL): without details, or once closed, nothing is posted: CONFIRM_UNAVAILABLE, no row", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  assert.deepEqual(await a.board.request(pending({ details: undefined })), {
    outcome: "denied",
    reason: "CONFIRM_UNAVAILABLE",
  });
  assert.deepEqual(await b.board.list(), []);
  assert.deepEqual(a.audit.rows, []);
});

Deno.test("ApprovalBoard (PostgreSQL): close() withdraws the runtime's waiting calls; the others' stay", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const mine = a.board.request(pending());
  const theirs = b.board.request(pending());
  const both = await until(async () => {
    const listed = await a.board.list("pending");
    return listed.length === 2 ? listed : undefined;
  });
  await a.board.close();
  assert.deepEqual(await mine, { outcome: "denied", reason: "CONFIRM_WITHDRAWN" });
  assert.deepEqual(a.audit.rows, [approvalRow("event", "CONFIRM_WITHDRAWN", null)]);
  const [left] = await b.board.list("pending");
  assert.ok(both.some((x) => x.id === left.id));
  assert.equal(await a.board.decide(left.id, "approve", "console"), "ok");
  assert.deepEqual(await theirs, { outcome: "approved" });
  assert.deepEqual(await a.board.request(pending()), {
    outcome: "denied",
    reason: "CONFIRM_UNAVAILABLE",
  });
});

Deno.test("ApprovalBoard (PostgreSQL): tenants are walled: another tenant's runtime lists, hears and decides nothing of A's", async () => {
  await using acme = await runtimes(2);
  await using globex = await runtimes(1);
  const [a, b] = acme.list;
  const [g] = globex.list;
  const answer = a.board.request(pending());
  const listed = await onlyPending(b.board);
  await until(() => b.events.some((e) => e.type === "added"));
  assert.deepEqual(await g.board.list(), []);
  assert.equal(await g.board.decide(listed.id, "approve", "console"), "unknown");
  assert.equal(await b.board.decide(listed.id, "deny", "console"), "ok");
  assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_DENIED" });
  await until(() => b.events.some((e) => e.type === "decided"));
  // Its notifications reached globex's runtime too (one channel); it read nothing back.
  await new Promise((res) => setTimeout(res, 200));
  assert.deepEqual(g.events, []);
  assert.deepEqual(await g.board.list(), []);
});

Deno.test("ApprovalBoard (PostgreSQL): a database down while A waits is waited out, and a decision after it is honoured", async () => {
  using _faults = clientFaultsTolerated();
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const answer = a.board.request(pending({ timeoutMs: 30_000 }));
  const listed = await onlyPending(b.board);
  try {
    await pg.stop();
    await new Promise((res) => setTimeout(res, 700));
  } finally {
    await pg.start();
  }
  assert.equal(
    await until(() => b.board.decide(listed.id, "approve", "console").catch(() => undefined)),
    "ok",
  );
  assert.deepEqual(await answer, { outcome: "approved" });
  assert.deepEqual(a.audit.rows, [approvalRow("allow", "APPROVED", "console")]);
});

Deno.test("ApprovalBoard (PostgreSQL): a database still down at the deadline is a timeout, never an approval", async () => {
  using _faults = clientFaultsTolerated();
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const answer = a.board.request(pending({ timeoutMs: 1_500 }));
  await onlyPending(b.board);
  try {
    await pg.stop();
    assert.deepEqual(await answer, { outcome: "timeout" });
    assert.deepEqual(a.audit.rows, [approvalRow("deny", "CONFIRM_TIMEOUT", null)]);
  } finally {
    await pg.start();
  }
});

Deno.test("ApprovalBoard (PostgreSQL): a post while the database is stopped is CONFIRM_UNAVAILABLE, within the pool's bounds", async () => {
  using _faults = clientFaultsTolerated();
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  try {
    await pg.stop();
    const t0 = performance.now();
    assert.deepEqual(await a.board.request(pending()), {
      outcome: "denied",
      reason: "CONFIRM_UNAVAILABLE",
    });
    // The pool's bound (two statement timeouts and a connect, 1 s each), on a loaded machine:
    // refused, never left to the 60 s timeout.
    const ms = performance.now() - t0;
    assert.ok(ms < ANSWER_BOUND_MS, `answered after ${ms} ms`);
    assert.deepEqual(a.audit.rows, []);
  } finally {
    await pg.start();
  }
  assert.deepEqual(await until(() => b.board.list().catch(() => undefined)), []);
});

Deno.test("ApprovalBoard (PostgreSQL): a decision made without a notification is still heard, by the poll", async () => {
  await using rt = await runtimes(1, { pollMs: 100 });
  const [a] = rt.list;
  const answer = a.board.request(pending());
  const listed = await onlyPending(a.board);
  // The owner decides behind the boards' backs: no NOTIFY.
  await owner.transaction((tx) =>
    tx`UPDATE approvals SET state = 'denied', decided_at = now(), decided_by = 'owner'
      WHERE id = ${listed.id}`
  );
  assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_DENIED" });
});

Deno.test(clusterTeardown("ApprovalBoard (PostgreSQL) tests", pg, owner));
