/**
 * One contract for the approvals port (the gate's `Approver` plus the console's `list`,
 * `decide` and `subscribe`): one `ApprovalBoard` over each `DecisionStore` adapter, the
 * embedded `MemoryDecisionStore` and `PgDecisionStore` (PostgreSQL as the runtime's non-owner
 * role, a fresh tenant per test). The same vectors run against both: what is listed, what
 * each decision answers the waiting call, the one audit row per outcome, the live view's
 * events, and the fail-closed paths.
 *
 * Where the stores may differ, only the common contract is asserted, and that is said where
 * it arises.
 */
import { MemorySink } from "../../tests/helpers/memory_sink.ts";
import { until } from "../../tests/helpers/until.ts";
import {
  approvalRow,
  type BoardAdapter,
  boardAdapters,
  onlyPending,
} from "../../tests/helpers/decision_boards.ts";
import assert from "node:assert/strict";
import type { ApprovalOutcome, PendingApproval } from "../gate/approver.ts";
import { PgDatabase } from "../store/pg_database.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { pending } from "../../tests/helpers/pending_approval.ts";
import type { Approval, SettleResult as DecideResult } from "../store/decision_store.ts";
import { ApprovalBoard, type ApprovalDecision, type ApprovalEvent } from "./approval_board.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
const app = await PgDatabase.open({ url: pg.appUrl });

/** The port both adapters are: the `Approver` and the console's side of it. */
interface ApprovalsPort {
  request(pending: PendingApproval, signal?: AbortSignal): Promise<ApprovalOutcome>;
  list(state?: "pending" | "decided"): Approval[] | Promise<Approval[]>;
  decide(id: string, decision: ApprovalDecision, by: string): DecideResult | Promise<DecideResult>;
  subscribe(listener: (event: ApprovalEvent) => void): () => void;
}

const ADAPTERS: BoardAdapter<ApprovalsPort>[] = boardAdapters(
  "approval",
  { app, owner },
  (store, audit, options) => new ApprovalBoard(store, audit, options),
);

/** The finished approval `id`, as `list("decided")` shows it. */
async function decided(port: ApprovalsPort, id: string): Promise<Approval | undefined> {
  return (await port.list("decided")).find((a) => a.id === id);
}

for (const adapter of ADAPTERS) {
  const test = (name: string, fn: (audit: MemorySink, port: ApprovalsPort) => Promise<void>) =>
    Deno.test(`ApprovalsPort (${adapter.name}): ${name}`, async () => {
      const audit = new MemorySink();
      await using opened = await adapter.open(audit);
      await fn(audit, opened.port);
    });

  test("a request is listed pending with the exact held request", async (audit, port) => {
    const held = pending();
    const answer = port.request(held);
    const approval = await onlyPending(port);
    assert.match(approval.id, /^[A-Za-z0-9_-]{16,}$/);
    assert.equal(approval.state, "pending");
    assert.equal(approval.agent, "alice");
    assert.equal(approval.session, "s-1");
    assert.equal(approval.origin, "https://bank.test");
    assert.equal(approval.method, "POST");
    assert.equal(approval.kind, "form");
    assert.deepEqual(approval.request, held.details!.request, "the exact held request");
    assert.equal(Date.parse(approval.expires_at) - Date.parse(approval.created_at), 60_000);
    assert.equal(approval.decided_at, undefined);
    assert.equal(approval.decided_by, undefined);
    assert.deepEqual(await port.list("decided"), []);
    assert.deepEqual((await port.list()).map((a) => a.id), [approval.id]);
    assert.deepEqual(audit.rows, [], "nothing is written while it waits");
    assert.equal(await port.decide(approval.id, "deny", "console"), "ok");
    await answer;
  });

  test(
    "approve: the call is approved, the record approved by the door, one APPROVED row",
    async (audit, port) => {
      const answer = port.request(pending());
      const { id } = await onlyPending(port);
      assert.equal(await port.decide(id, "approve", "api"), "ok");
      assert.deepEqual(await answer, { outcome: "approved" });
      assert.deepEqual(await port.list("pending"), []);
      const record = await decided(port, id);
      assert.equal(record?.state, "approved");
      assert.equal(record?.decided_by, "api");
      assert.ok(record?.decided_at && !Number.isNaN(Date.parse(record.decided_at)));
      assert.deepEqual(audit.rows, [approvalRow("allow", "APPROVED", "api")]);
    },
  );

  test(
    "deny: the call is CONFIRM_DENIED, the record denied, one deny row naming the door",
    async (audit, port) => {
      const answer = port.request(pending());
      const { id } = await onlyPending(port);
      assert.equal(await port.decide(id, "deny", "console"), "ok");
      assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_DENIED" });
      const record = await decided(port, id);
      assert.equal(record?.state, "denied");
      assert.equal(record?.decided_by, "console");
      assert.deepEqual(audit.rows, [approvalRow("deny", "CONFIRM_DENIED", "console")]);
    },
  );

  test(
    "a second decision is not_pending and changes nothing; an unknown id is unknown",
    async (audit, port) => {
      const answer = port.request(pending());
      const { id } = await onlyPending(port);
      assert.equal(await port.decide(id, "approve", "console"), "ok");
      assert.deepEqual(await answer, { outcome: "approved" });
      assert.equal(await port.decide(id, "deny", "api"), "not_pending");
      assert.equal(await port.decide(id, "approve", "api"), "not_pending");
      assert.equal((await decided(port, id))?.state, "approved");
      assert.equal((await decided(port, id))?.decided_by, "console");
      assert.equal(audit.rows.length, 1, "a refused decision writes no row");
      assert.equal(await port.decide(crypto.randomUUID(), "approve", "console"), "unknown");
      assert.equal(await port.decide("no-such-id", "deny", "console"), "unknown");
    },
  );

  test(
    "unanswered: the call times out, the record is expired, a later decision is not_pending",
    async (audit, port) => {
      const answer = port.request(pending({ timeoutMs: 300 }));
      const { id } = await onlyPending(port);
      assert.deepEqual(await answer, { outcome: "timeout" });
      assert.deepEqual(await port.list("pending"), []);
      assert.equal((await decided(port, id))?.state, "expired");
      assert.equal(await port.decide(id, "approve", "console"), "not_pending");
      assert.deepEqual(audit.rows, [approvalRow("deny", "CONFIRM_TIMEOUT", null)]);
    },
  );

  test(
    "the call going away withdraws it: CONFIRM_WITHDRAWN, a later decision not_pending",
    async (audit, port) => {
      const abort = new AbortController();
      const answer = port.request(pending(), abort.signal);
      const { id } = await onlyPending(port);
      abort.abort();
      assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_WITHDRAWN" });
      assert.deepEqual(await port.list("pending"), []);
      assert.equal((await decided(port, id))?.state, "withdrawn");
      assert.equal(await port.decide(id, "approve", "console"), "not_pending");
      assert.deepEqual(audit.rows, [approvalRow("event", "CONFIRM_WITHDRAWN", null)]);
    },
  );

  test(
    "a call already gone is answered CONFIRM_WITHDRAWN at once and never listed pending",
    async (audit, port) => {
      const gone = new AbortController();
      gone.abort();
      assert.deepEqual(await port.request(pending(), gone.signal), {
        outcome: "denied",
        reason: "CONFIRM_WITHDRAWN",
      });
      assert.deepEqual(await port.list("pending"), []);
      assert.deepEqual(audit.rows, [approvalRow("event", "CONFIRM_WITHDRAWN", null)]);
      // Not asserted: whether a store's history (`list("decided")`) keeps this never-shown
      // record, withdrawn.
    },
  );

  test("no details: CONFIRM_UNAVAILABLE at once, no row, nothing listed", async (audit, port) => {
    assert.deepEqual(await port.request(pending({ details: undefined })), {
      outcome: "denied",
      reason: "CONFIRM_UNAVAILABLE",
    });
    assert.deepEqual(await port.list(), []);
    assert.deepEqual(audit.rows, []);
  });

  test(
    "subscribe: added then decided, with the record's states; unsubscribe stops it",
    async (_audit, port) => {
      const events: ApprovalEvent[] = [];
      const stop = port.subscribe((e) => events.push(e));
      const answer = port.request(pending());
      const { id } = await onlyPending(port);
      // The shared live view reads each notification back: wait for the add before deciding.
      await until(() => events.some((e) => e.type === "added" && e.approval.id === id));
      assert.equal(await port.decide(id, "deny", "console"), "ok");
      await answer;
      await until(() => events.some((e) => e.type === "decided"));
      assert.deepEqual(events.map((e) => [e.type, e.approval.id, e.approval.state]), [
        ["added", id, "pending"],
        ["decided", id, "denied"],
      ]);
      assert.equal(events[1].approval.decided_by, "console");
      stop();
      const next = port.request(pending({ timeoutMs: 200 }));
      await onlyPending(port);
      await next;
      await new Promise((res) => setTimeout(res, 200));
      assert.equal(events.length, 2, "nothing heard after unsubscribing");
    },
  );

  test("subscribe: a timeout is heard as added then expired", async (_audit, port) => {
    const events: ApprovalEvent[] = [];
    const stop = port.subscribe((e) => events.push(e));
    const answer = port.request(pending({ timeoutMs: 400 }));
    const { id } = await onlyPending(port);
    assert.deepEqual(await answer, { outcome: "timeout" });
    await until(() => events.some((e) => e.type === "expired"));
    assert.deepEqual(events.map((e) => [e.type, e.approval.id]), [["added", id], ["expired", id]]);
    stop();
  });

  test(
    "an approve whose audit row cannot be written is denied AUDIT_UNAVAILABLE",
    async (audit, port) => {
      const answer = port.request(pending());
      const { id } = await onlyPending(port);
      audit.failing = true;
      assert.equal(await port.decide(id, "approve", "console"), "ok");
      assert.deepEqual(await answer, { outcome: "denied", reason: "AUDIT_UNAVAILABLE" });
      assert.deepEqual(audit.rows, []);
      assert.equal(await port.decide(id, "approve", "console"), "not_pending");
      // No console lists as approved a call that never ran.
      assert.equal((await decided(port, id))?.state, "denied");
    },
  );

  Deno.test(`ApprovalsPort (${adapter.name}): the list is newest first, pending before finished`, async () => {
    const audit = new MemorySink();
    // A clock a second apart per request (near the real time: the board checks expiry
    // against the database's clock).
    let clock = Date.now();
    await using opened = await adapter.open(audit, () => clock);
    const port = opened.port;
    const answers: Promise<ApprovalOutcome>[] = [];
    for (const agent of ["a-0", "a-1", "a-2"]) {
      clock += 1_000;
      answers.push(port.request(pending({ agent })));
      await until(async () => (await port.list("pending")).some((a) => a.agent === agent));
    }
    assert.deepEqual((await port.list("pending")).map((a) => a.agent), ["a-2", "a-1", "a-0"]);
    const oldest = (await port.list("pending")).find((a) => a.agent === "a-0")!;
    assert.equal(await port.decide(oldest.id, "deny", "console"), "ok");
    await answers[0];
    assert.deepEqual((await port.list()).map((a) => [a.agent, a.state]), [
      ["a-2", "pending"],
      ["a-1", "pending"],
      ["a-0", "denied"],
    ]);
    for (const a of await port.list("pending")) await port.decide(a.id, "deny", "console");
    await Promise.all(answers);
  });
}

Deno.test(clusterTeardown("ApprovalsPort contract", pg, app, owner));
