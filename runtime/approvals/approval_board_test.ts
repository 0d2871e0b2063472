import assert from "node:assert/strict";
import { MemorySink } from "../../tests/helpers/memory_sink.ts";
import { formDetails, pending as heldClick } from "../../tests/helpers/pending_approval.ts";
import { until } from "../../tests/helpers/until.ts";
import { approvalRow } from "../../tests/helpers/decision_boards.ts";
import type { PendingApproval } from "../gate/approver.ts";
import { MemoryDecisionStore } from "../store/memory_decision_store.ts";
import { ApprovalBoard, type ApprovalEvent } from "./approval_board.ts";

/** A board over this process's memory (the embedded store). */
function memoryBoard(sink: MemorySink, keep?: number, now?: () => number): ApprovalBoard {
  return new ApprovalBoard(new MemoryDecisionStore("approval", { keep }), sink, { now });
}

const SECRET_PATH = "/transfer/acct-777";
const SECRET_QUERY = "token=q-5ecret";
const PLANTED = "planted-value-41e9";
const STORED_SECRET = "stored-S3cret-pw";

/** The held form post every test approves: a planted value and a secret, redacted. */
const DETAILS = formDetails(
  `https://bank.test${SECRET_PATH}?${SECRET_QUERY}`,
  `amount=${PLANTED}&password=${STORED_SECRET}`,
  (s) => s.replaceAll(STORED_SECRET, "[redacted]"),
);
/** The held request every test approves. */
const REQUEST = DETAILS.request;

/** The shared held click, with this file's request and its deny-detail line. */
function pending(overrides: Partial<PendingApproval> = {}): PendingApproval {
  const detail = "POST form to https://bank.test/transfer";
  return heldClick({ detail, details: { ...DETAILS }, ...overrides });
}

/** The only pending approval's id, once posted. */
async function onlyId(queue: ApprovalBoard): Promise<string> {
  const list = await until(async () => {
    const pending = await queue.list("pending");
    return pending.length > 0 ? pending : undefined;
  });
  assert.equal(list.length, 1);
  return list[0].id;
}

Deno.test("ApprovalBoard.request() lists the approval and resolves approved on approve", async () => {
  const sink = new MemorySink();
  const queue = memoryBoard(sink);
  const answer = queue.request(pending());
  const [listed] = await queue.list("pending");
  assert.match(listed.id, /^[A-Za-z0-9_-]{16,}$/);
  assert.equal(listed.agent, "alice");
  assert.equal(listed.session, "s-1");
  assert.equal(listed.origin, "https://bank.test");
  assert.equal(listed.method, "POST");
  assert.equal(listed.kind, "form");
  assert.deepEqual(listed.request, REQUEST);
  assert.equal(listed.request.url.text, `https://bank.test${SECRET_PATH}?${SECRET_QUERY}`);
  assert.equal(listed.request.entries[0].value.text, PLANTED);
  assert.equal(listed.request.entries[1].value.text, "[redacted]");
  assert.ok(!JSON.stringify(listed).includes(STORED_SECRET));
  assert.equal(listed.state, "pending");
  assert.equal(Date.parse(listed.expires_at) - Date.parse(listed.created_at), 60_000);

  assert.equal(await queue.decide(listed.id, "approve", "console"), "ok");
  assert.deepEqual(await answer, { outcome: "approved" });
  assert.deepEqual(await queue.list("pending"), []);
  const [decided] = await queue.list("decided");
  assert.equal(decided.state, "approved");
  assert.equal(decided.decided_by, "console");
  assert.deepEqual(sink.rows, [approvalRow("allow", "APPROVED", "console")]);
});

Deno.test("ApprovalBoard.request() keeps a script write's kind and its own copy of the request", async () => {
  const queue = memoryBoard(new MemorySink());
  const request = structuredClone(REQUEST);
  const answer = queue.request(pending({
    details: { origin: "https://bank.test", kind: "script", request },
  }));
  request.entries.length = 0;
  const [listed] = await queue.list("pending");
  assert.equal(listed.kind, "script");
  assert.equal(listed.request.entries.length, 2, "a later change by the caller changes nothing");
  await queue.close();
  await answer;
});

Deno.test("ApprovalBoard.decide() deny resolves CONFIRM_DENIED; a second decide is not_pending", async () => {
  const sink = new MemorySink();
  const queue = memoryBoard(sink);
  const answer = queue.request(pending());
  const id = await onlyId(queue);
  assert.equal(await queue.decide(id, "deny", "api"), "ok");
  assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_DENIED" });
  assert.equal(await queue.decide(id, "approve", "api"), "not_pending");
  assert.equal(await queue.decide(id, "deny", "api"), "not_pending");
  assert.equal(await queue.decide("no-such-id", "approve", "api"), "unknown");
  assert.equal((await queue.list("decided"))[0].state, "denied");
  assert.equal(sink.rows.length, 1, "a refused second decision writes no row");
  assert.equal(sink.rows[0].decision, "deny");
  assert.equal(sink.rows[0].reason, "CONFIRM_DENIED");
  assert.equal(sink.rows[0].rule, "api");
});

Deno.test("ApprovalBoard.request() times out: outcome timeout, record expired, CONFIRM_TIMEOUT row", async () => {
  const sink = new MemorySink();
  const queue = memoryBoard(sink);
  const events: ApprovalEvent[] = [];
  queue.subscribe((e) => events.push(e));
  const outcome = await queue.request(pending({ timeoutMs: 10 }));
  assert.deepEqual(outcome, { outcome: "timeout" });
  assert.deepEqual(await queue.list("pending"), []);
  const [expired] = await queue.list("decided");
  assert.equal(expired.state, "expired");
  assert.equal(await queue.decide(expired.id, "approve", "console"), "not_pending");
  assert.deepEqual(events.map((e) => e.type), ["added", "expired"]);
  assert.equal(sink.rows.length, 1);
  assert.equal(sink.rows[0].decision, "deny");
  assert.equal(sink.rows[0].reason, "CONFIRM_TIMEOUT");
});

Deno.test("ApprovalBoard.request() aborted by the caller withdraws the approval", async () => {
  const sink = new MemorySink();
  const queue = memoryBoard(sink);
  const events: ApprovalEvent[] = [];
  queue.subscribe((e) => events.push(e));
  const controller = new AbortController();
  const answer = queue.request(pending(), controller.signal);
  const id = await onlyId(queue);
  controller.abort();
  assert.deepEqual(await answer, { outcome: "denied", reason: "CONFIRM_WITHDRAWN" });
  assert.deepEqual(await queue.list("pending"), []);
  assert.equal((await queue.list("decided"))[0].state, "withdrawn");
  assert.equal(await queue.decide(id, "approve", "console"), "not_pending");
  assert.deepEqual(events.map((e) => e.type), ["added", "withdrawn"]);
  assert.equal(sink.rows[0].decision, "event");
  assert.equal(sink.rows[0].reason, "CONFIRM_WITHDRAWN");

  // Already aborted: answered at once, never listed as pending.
  const gone = new AbortController();
  gone.abort();
  assert.deepEqual(await queue.request(pending(), gone.signal), {
    outcome: "denied",
    reason: "CONFIRM_WITHDRAWN",
  });
  assert.deepEqual(await queue.list("pending"), []);
});

Deno.test("ApprovalBoard.request() without details answers CONFIRM_UNAVAILABLE and lists nothing", async () => {
  const sink = new MemorySink();
  const queue = memoryBoard(sink);
  const outcome = await queue.request(pending({ details: undefined }));
  assert.deepEqual(outcome, { outcome: "denied", reason: "CONFIRM_UNAVAILABLE" });
  assert.deepEqual(await queue.list(), []);
});

Deno.test("ApprovalBoard audit rows carry neither the URL's path or query nor an entry", async () => {
  const sink = new MemorySink();
  const queue = memoryBoard(sink);
  // Every kind of outcome, with a page origin that is (wrongly) a whole URL.
  const hostile = pending({
    details: { ...pending().details!, origin: `https://bank.test${SECRET_PATH}?${SECRET_QUERY}` },
  });
  const a = queue.request(hostile);
  await queue.decide(await onlyId(queue), "approve", "console");
  const b = queue.request(pending());
  await queue.decide(await onlyId(queue), "deny", "console");
  const c = queue.request(pending({ timeoutMs: 5 }));
  const controller = new AbortController();
  const d = queue.request(pending(), controller.signal);
  controller.abort();
  await Promise.all([a, b, c, d]);
  assert.equal(sink.rows.length, 4);
  const text = JSON.stringify(sink.rows);
  for (const secret of [SECRET_PATH, SECRET_QUERY, PLANTED, "amount", "acct-777", "[redacted]"]) {
    assert.equal(text.includes(secret), false, `${secret} reached the audit`);
  }
  for (const row of sink.rows) assert.equal(row.origin, "https://bank.test");
});

Deno.test("ApprovalBoard.decide() approve whose audit row fails is a deny", async () => {
  const sink = new MemorySink();
  const queue = memoryBoard(sink);
  const answer = queue.request(pending());
  sink.failing = true;
  assert.equal(await queue.decide(await onlyId(queue), "approve", "console"), "ok");
  assert.deepEqual(await answer, { outcome: "denied", reason: "AUDIT_UNAVAILABLE" });
  assert.equal((await queue.list("decided"))[0].state, "denied");
});

Deno.test("ApprovalBoard.subscribe() hears added and decided; unsubscribe stops it", async () => {
  const queue = memoryBoard(new MemorySink());
  const events: ApprovalEvent[] = [];
  const stop = queue.subscribe((e) => events.push(e));
  // A listener that throws does not stop the others or the decision.
  queue.subscribe(() => {
    throw new Error("broken tab");
  });
  const answer = queue.request(pending());
  const id = await onlyId(queue);
  await queue.decide(id, "approve", "console");
  await answer;
  assert.deepEqual(events.map((e) => [e.type, e.approval.id, e.approval.state]), [
    ["added", id, "pending"],
    ["decided", id, "approved"],
  ]);
  // Listeners get copies: changing one changes nothing.
  events[0].approval.request.entries[0].value.text = "changed";
  events[0].approval.request.flags.push("bidi");
  assert.equal((await queue.list("decided"))[0].request.entries[0].value.text, PLANTED);
  assert.deepEqual((await queue.list("decided"))[0].request.flags, []);
  stop();
  const next = queue.request(pending({ timeoutMs: 1 }));
  await next;
  assert.equal(events.length, 2);
});

Deno.test("ApprovalBoard.list() is newest first and keeps the last finished ones only", async () => {
  let clock = Date.now();
  const queue = memoryBoard(new MemorySink(), 3, () => clock);
  const answers = [];
  for (let i = 0; i < 5; i++) {
    clock += 1000;
    answers.push(queue.request(pending({ agent: `agent-${i}` })));
  }
  assert.deepEqual((await queue.list("pending")).map((a) => a.agent), [
    "agent-4",
    "agent-3",
    "agent-2",
    "agent-1",
    "agent-0",
  ]);
  for (const a of (await queue.list("pending")).reverse()) {
    await queue.decide(a.id, "deny", "console");
  }
  await Promise.all(answers);
  assert.deepEqual((await queue.list("decided")).map((a) => a.agent), [
    "agent-4",
    "agent-3",
    "agent-2",
  ]);
  assert.equal((await queue.list()).length, 3);
});

Deno.test("ApprovalBoard.close() withdraws every pending approval", async () => {
  const queue = memoryBoard(new MemorySink());
  const answers = [queue.request(pending()), queue.request(pending())];
  await queue.close();
  for (const outcome of await Promise.all(answers)) {
    assert.deepEqual(outcome, { outcome: "denied", reason: "CONFIRM_WITHDRAWN" });
  }
  assert.deepEqual(await queue.list("pending"), []);
});
