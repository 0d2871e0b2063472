/**
 * Operator questions shared across runtimes in a real PostgreSQL, through `QuestionBoard`
 * over a `PgDecisionStore`: each runtime has its own pool, store and board (as separate
 * processes would), so a question asked on A is listed on B, answered there, and A's waiting
 * call returns the answer within a second after writing the outcome's one audit row (never
 * the question's or the answer's text); racing answers, timeouts, withdrawals, a failing
 * audit and a stopped database all end closed, never with an answer nobody gave; tenants are
 * walled; and the runtime's role, sending any SQL it likes, cannot rewrite a finished
 * question or touch another tenant's.
 */
import { ANSWER_BOUND_MS, until } from "../../tests/helpers/until.ts";
import {
  onlyListed,
  onlyPending,
  questionRow,
  sharedRuntimes,
} from "../../tests/helpers/decision_boards.ts";
import assert from "node:assert/strict";
import postgres from "postgres";
import { PgAuditLog } from "../store/pg_audit_log.ts";
import { PgAuditSink } from "../store/pg_audit_sink.ts";
import { consolePushChannel } from "../cli/push_channel.ts";
import { OmotaiError } from "../errors.ts";
import { Redactor } from "../redact/mod.ts";
import { PgDatabase } from "../store/pg_database.ts";
import {
  assertRefused,
  asTenant,
  clientFaultsTolerated,
  clusterTeardown,
  startPostgres,
} from "../../tests/helpers/postgres.ts";
import { QUESTION_MAX_CHARS } from "../store/decision_store.ts";
import { DECISION_CHANNELS } from "../store/pg_decision_store.ts";
import { type AskOutcome, QuestionBoard, type QuestionEvent } from "./question_board.ts";

const QUESTIONS_CHANNEL = DECISION_CHANNELS.question;

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();

/** `n` runtimes of a tenant (a fresh one by default), each with its own pool and board. */
function runtimes(n: number, options: { tenant?: string; pollMs?: number } = {}) {
  return sharedRuntimes<"question", QuestionBoard, QuestionEvent>(
    { appUrl: pg.appUrl, owner },
    "question",
    n,
    (store, audit, o) => new QuestionBoard(store, audit, o),
    options,
  );
}

/** What a test asks: a question whose text is easy to look for. */
function ask(question = `Which account? marker-${crypto.randomUUID()}`) {
  return { question, agent: "alice", session: "s-1" };
}

/** Asserts `promise` rejects with the coded error `code`. */
async function rejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof OmotaiError, `not an OmotaiError: ${err}`);
    assert.equal(err.code, code);
    return true;
  });
}

/** Keeps `promise`'s rejection from being unhandled while the test does other things. */
function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

Deno.test("QuestionBoard (PostgreSQL): asked on A, listed and answered on B: A gets the answer within a second, one row on A", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const asked = ask();
  const answer = a.board.ask(asked, 60_000);
  const listed = await onlyPending(b.board);
  assert.equal(listed.state, "pending");
  assert.equal(listed.question, asked.question);
  assert.equal(listed.agent, "alice");
  assert.equal(listed.session, "s-1");
  assert.equal(Date.parse(listed.expires_at) - Date.parse(listed.created_at), 60_000);
  assert.equal(listed.answer, undefined);
  await until(() => b.events.some((e) => e.type === "added" && e.question.id === listed.id));

  const t0 = performance.now();
  assert.equal(await b.board.answer(listed.id, "the savings one", "api"), "ok");
  assert.deepEqual(await answer, { answer: "the savings one" });
  const ms = performance.now() - t0;
  // Heard through the database's notification; the bound is a loaded machine's (until.ts).
  assert.ok(ms < ANSWER_BOUND_MS, `A answered after ${ms} ms`);
  assert.deepEqual(a.audit.rows, [questionRow("ANSWERED", "api")]);
  assert.deepEqual(b.audit.rows, [], "only the asking runtime writes the row");

  await until(() => b.events.some((e) => e.type === "answered"));
  const mine = b.events.filter((e) => e.question.id === listed.id);
  assert.deepEqual(mine.map((e) => e.type), ["added", "answered"]);
  assert.equal(mine[1].question.answer, "the savings one");
  assert.equal(mine[1].question.answered_by, "api");
  await until(() => a.events.some((e) => e.type === "answered"));
  // Both list it as answered now, newest first, with the shape every store lists.
  assert.deepEqual(await b.board.list("pending"), []);
  const [done] = await a.board.list("answered");
  assert.equal(done.id, listed.id);
  assert.equal(done.state, "answered");
  assert.equal(done.answer, "the savings one");
  assert.equal(done.answered_by, "api");
  assert.ok(Date.parse(done.answered_at!) >= Date.parse(done.created_at));
  assert.deepEqual((await a.board.list()).map((q) => q.id), [listed.id]);
  assert.equal(await b.board.answer(listed.id, "another", "console"), "not_pending");
  assert.equal(await b.board.answer(crypto.randomUUID(), "x", "console"), "unknown");
  assert.equal((await a.store.get(listed.id))?.answer, "the savings one");
});

Deno.test("QuestionBoard (PostgreSQL): the pending list is newest first, pending before finished", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const first = settledLater(a.board.ask(ask("first"), 60_000));
  await onlyPending(b.board);
  const second = settledLater(a.board.ask(ask("second"), 60_000));
  const pending = await until(async () => {
    const listed = await b.board.list("pending");
    return listed.length === 2 ? listed : undefined;
  });
  assert.deepEqual(pending.map((q) => q.question), ["second", "first"]);
  assert.equal(await b.board.answer(pending[1].id, "one", "console"), "ok");
  assert.deepEqual(await first, { answer: "one" });
  assert.deepEqual((await b.board.list()).map((q) => [q.question, q.state]), [
    ["second", "pending"],
    ["first", "answered"],
  ]);
  assert.equal(await b.board.answer(pending[0].id, "two", "console"), "ok");
  assert.deepEqual(await second, { answer: "two" });
});

Deno.test("QuestionBoard (PostgreSQL): of two answers on B and C at once exactly one wins, and A returns the winner's", async () => {
  await using rt = await runtimes(3);
  const [a, b, c] = rt.list;
  for (let round = 0; round < 10; round++) {
    a.audit.rows.length = 0;
    const answer = a.board.ask(ask(), 60_000);
    const listed = await onlyPending(b.board);
    const [fromB, fromC] = await Promise.all([
      b.board.answer(listed.id, `b-${round}`, "console"),
      c.board.answer(listed.id, `c-${round}`, "api"),
    ]);
    assert.equal([fromB, fromC].filter((x) => x === "ok").length, 1, `round ${round}`);
    assert.equal([fromB, fromC].filter((x) => x === "not_pending").length, 1, `round ${round}`);
    const outcome: AskOutcome = await answer;
    if (fromB === "ok") {
      assert.deepEqual(outcome, { answer: `b-${round}` });
      assert.deepEqual(a.audit.rows, [questionRow("ANSWERED", "console")]);
    } else {
      assert.deepEqual(outcome, { answer: `c-${round}` });
      assert.deepEqual(a.audit.rows, [questionRow("ANSWERED", "api")]);
    }
  }
});

Deno.test("QuestionBoard (PostgreSQL): unanswered, A's ask times out, the question is expired, and a later answer on B is not_pending", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const answer = a.board.ask(ask(), 400);
  // Any state: on a loaded machine the 400 ms may run out before B first reads it.
  const listed = await onlyListed(b.board);
  assert.deepEqual(await answer, { timeout: true });
  assert.equal((await b.store.get(listed.id))?.state, "expired");
  assert.equal(await b.board.answer(listed.id, "too late", "console"), "not_pending");
  assert.deepEqual(a.audit.rows, [questionRow("ASK_TIMEOUT")]);
  await until(() => b.events.some((e) => e.type === "expired" && e.question.id === listed.id));
  const [done] = await b.board.list("answered");
  assert.equal(done.state, "expired");
  assert.equal(done.answer, undefined);
  assert.equal(done.answered_at, undefined);
});

Deno.test("QuestionBoard (PostgreSQL): A's call going away withdraws the question (ASK_WITHDRAWN); B's answer is then not_pending", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const abort = new AbortController();
  const answer = settledLater(a.board.ask(ask(), 60_000, abort.signal));
  const listed = await onlyPending(b.board);
  abort.abort();
  await rejectsWith(answer, "ASK_WITHDRAWN");
  assert.equal((await b.store.get(listed.id))?.state, "withdrawn");
  assert.equal(await b.board.answer(listed.id, "yes", "console"), "not_pending");
  assert.deepEqual(a.audit.rows, [questionRow("ASK_WITHDRAWN")]);
  await until(() => b.events.some((e) => e.type === "withdrawn" && e.question.id === listed.id));

  // A call gone before it was asked is never posted; its row says so.
  const gone = new AbortController();
  gone.abort();
  await rejectsWith(a.board.ask(ask(), 60_000, gone.signal), "ASK_WITHDRAWN");
  assert.deepEqual(await b.board.list("pending"), []);
  assert.deepEqual(a.audit.rows, [questionRow("ASK_WITHDRAWN"), questionRow("ASK_WITHDRAWN")]);
});

Deno.test("QuestionBoard (PostgreSQL): close() withdraws the runtime's waiting questions, the others' stay; later asks are ASK_UNAVAILABLE", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const mine = settledLater(a.board.ask(ask("mine"), 60_000));
  const theirs = b.board.ask(ask("theirs"), 60_000);
  await until(async () => (await a.board.list("pending")).length === 2);
  await a.board.close();
  await rejectsWith(mine, "ASK_WITHDRAWN");
  assert.deepEqual(a.audit.rows, [questionRow("ASK_WITHDRAWN")]);
  const [left] = await b.board.list("pending");
  assert.equal(left.question, "theirs");
  // A closed runtime's console still answers (the board stays open).
  assert.equal(await a.board.answer(left.id, "fine", "console"), "ok");
  assert.deepEqual(await theirs, { answer: "fine" });
  await rejectsWith(a.board.ask(ask(), 60_000), "ASK_UNAVAILABLE");
  assert.deepEqual(await b.board.list("pending"), []);
});

Deno.test("QuestionBoard (PostgreSQL): an answer whose audit row cannot be written is AUDIT_UNAVAILABLE, never returned", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  a.audit.failing = true;
  const answer = settledLater(a.board.ask(ask(), 60_000));
  const listed = await onlyPending(b.board);
  assert.equal(await b.board.answer(listed.id, "secret answer", "console"), "ok");
  await rejectsWith(answer, "AUDIT_UNAVAILABLE");
  assert.deepEqual(a.audit.rows, []);
  // The board says what happened: withdrawn, by the audit's failure, without the answer.
  const after = await b.store.get(listed.id);
  assert.equal(after?.state, "withdrawn");
  assert.equal(after?.answer, undefined);
  // A timeout happens whether or not it can be written down.
  assert.deepEqual(await a.board.ask(ask(), 100), { timeout: true });
});

Deno.test("QuestionBoard (PostgreSQL): long texts are cut to QUESTION_MAX_CHARS (not inside a surrogate pair) and NUL is kept as U+FFFD", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const long = "q".repeat(QUESTION_MAX_CHARS - 1) + "😀" + "tail";
  const answer = a.board.ask(ask(long), 60_000);
  const listed = await onlyPending(b.board);
  assert.equal(listed.question, "q".repeat(QUESTION_MAX_CHARS - 1));
  assert.equal(
    await b.board.answer(listed.id, "a\u0000b" + "x".repeat(3 * QUESTION_MAX_CHARS), "api"),
    "ok",
  );
  const got = await answer;
  assert.ok("answer" in got);
  assert.equal(got.answer.length, QUESTION_MAX_CHARS);
  assert.ok(got.answer.startsWith("a\uFFFDbxxx"));
  // A NUL in a question posts too: the model's text must not look like an outage.
  const nul = a.board.ask(ask("a\u0000b"), 60_000);
  const second = await until(async () =>
    (await b.board.list("pending")).find((q) => q.question === "a\uFFFDb")
  );
  assert.equal(await b.board.answer(second.id, "ok", "api"), "ok");
  assert.deepEqual(await nul, { answer: "ok" });
});

Deno.test("QuestionBoard (PostgreSQL): tenants are walled: another tenant's runtime lists, hears and answers nothing of A's", async () => {
  await using acme = await runtimes(2);
  await using globex = await runtimes(1);
  const [a, b] = acme.list;
  const [g] = globex.list;
  const answer = a.board.ask(ask(), 60_000);
  const listed = await onlyPending(b.board);
  await until(() => b.events.some((e) => e.type === "added"));
  assert.deepEqual(await g.board.list(), []);
  assert.equal(await g.store.get(listed.id), undefined);
  assert.equal(await g.board.answer(listed.id, "from globex", "console"), "unknown");
  assert.equal((await b.store.get(listed.id))?.state, "pending");
  assert.equal(await b.board.answer(listed.id, "from acme", "console"), "ok");
  assert.deepEqual(await answer, { answer: "from acme" });
  await until(() => b.events.some((e) => e.type === "answered"));
  // Its notifications reached globex's runtime too (one channel); it read nothing back.
  await new Promise((res) => setTimeout(res, 200));
  assert.deepEqual(g.events, []);
  assert.deepEqual(await g.board.list(), []);
  assert.deepEqual(g.audit.rows, []);
});

Deno.test("QuestionBoard (PostgreSQL): neither the question's text nor the answer reaches an audit row (the tenant's real chain)", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const store = new PgAuditLog(a.db, rt.tenant, { redactor: new Redactor() });
  await using sink = new PgAuditSink(store);
  const questions = new QuestionBoard(a.store, sink);
  try {
    const asked = ask(`Q-TEXT-${crypto.randomUUID()}`);
    const answerText = `A-TEXT-${crypto.randomUUID()}`;
    const answered = questions.ask(asked, 60_000);
    const listed = await onlyPending(b.board);
    assert.equal(await b.board.answer(listed.id, answerText, "console"), "ok");
    assert.deepEqual(await answered, { answer: answerText });
    const expired = ask(`Q-EXPIRED-${crypto.randomUUID()}`);
    assert.deepEqual(await questions.ask(expired, 100), { timeout: true });
    const abort = new AbortController();
    const withdrawn = ask(`Q-WITHDRAWN-${crypto.randomUUID()}`);
    const gone = settledLater(questions.ask(withdrawn, 60_000, abort.signal));
    await until(async () => (await b.board.list("pending")).length === 1);
    abort.abort();
    await rejectsWith(gone, "ASK_WITHDRAWN");

    const rows = await store.rows();
    assert.deepEqual(rows.map((r) => [r.kind, r.reason, r.rule]), [
      ["ask_human", "ANSWERED", "console"],
      ["ask_human", "ASK_TIMEOUT", null],
      ["ask_human", "ASK_WITHDRAWN", null],
    ]);
    // Every column of every row of the tenant, as the owner reads them.
    const stored = JSON.stringify(
      await owner.transaction((tx) =>
        tx`SELECT * FROM audit_events WHERE tenant_id = ${rt.tenant}`
      ),
    );
    for (const text of [asked.question, answerText, expired.question, withdrawn.question]) {
      assert.ok(!stored.includes(text), "a text reached the audit");
      assert.ok(!stored.includes(text.slice(0, 12)), "part of a text reached the audit");
    }
  } finally {
    await questions.close();
  }
});

Deno.test("QuestionBoard (PostgreSQL): a login push is a shared question: approved on B lets A's login go on; anything else refuses it", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const push = consolePushChannel(a.board, { id: "s-1", agent: "alice" }, 60_000);
  const challenge = { vendor: "Okta", number: "42", origin: "https://bank.test" };
  const approved = push.ask(challenge);
  const listed = await onlyPending(b.board);
  assert.match(listed.question, /Okta shows the number 42/);
  assert.equal(await b.board.answer(listed.id, "approved", "console"), "ok");
  assert.equal(await approved, "approved");
  const denied = push.ask(challenge);
  assert.equal(await b.board.answer((await onlyPending(b.board)).id, "no", "console"), "ok");
  assert.equal(await denied, "denied");
  assert.equal(
    await consolePushChannel(a.board, { id: "s-1", agent: null }, 100).ask(challenge),
    "timeout",
  );
});

Deno.test("QuestionBoard (PostgreSQL): an answer made without a notification is still heard, by the poll; a spoofed NOTIFY settles nothing", async () => {
  await using rt = await runtimes(1, { pollMs: 100 });
  const [a] = rt.list;
  const answer = a.board.ask(ask(), 60_000);
  const listed = await onlyPending(a.board);
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    let settled = false;
    answer.then(() => settled = true, () => {});
    await sql`SELECT pg_notify(${QUESTIONS_CHANNEL}, ${listed.id})`;
    await sql`SELECT pg_notify(${QUESTIONS_CHANNEL}, ${"x".repeat(500)})`;
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(settled, false, "a spoof settles nothing");
  } finally {
    await sql.end();
  }
  // The owner answers behind the boards' backs: no NOTIFY.
  await owner.transaction((tx) =>
    tx`UPDATE questions SET state = 'answered', answer = 'polled', answered_by = 'owner'
      WHERE id = ${listed.id}`
  );
  assert.deepEqual(await answer, { answer: "polled" });
  assert.deepEqual(a.audit.rows, [questionRow("ANSWERED", "owner")]);
});

// ---------------------------------------------------------------------------------------------
// The runtime's role, sending any SQL it likes (as runtime/store/pg_attack_test.ts does)

const REFUSED =
  /QUESTION_FINAL|permission denied|must be (the )?owner|row-level security|check constraint/i;

Deno.test("QuestionBoard (PostgreSQL): the runtime's role cannot rewrite a finished question, nor change a pending one but by its outcome", async () => {
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const t = rt.tenant;
  const answered = a.board.ask(ask("answered one"), 60_000);
  const done = await onlyPending(b.board);
  assert.equal(await b.board.answer(done.id, "the real answer", "console"), "ok");
  await answered;
  const waiting = settledLater(a.board.ask(ask("pending one"), 60_000));
  const open = await onlyPending(b.board);
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    const upd = (id: string, set: string) => `UPDATE questions SET ${set} WHERE id = '${id}'`;
    await assertRefused(sql, t, [
      // A finished question stays as it ended.
      upd(done.id, `state = 'pending'`),
      upd(done.id, `answer = 'forged'`),
      upd(done.id, `answered_by = 'alice'`),
      upd(done.id, `answered_at = '2000-01-01'`),
      upd(done.id, `state = 'expired', answer = NULL, answered_by = NULL`),
      upd(done.id, `state = 'answered', answer = 'forged', answered_by = 'api'`),
      // A pending one changes by its outcome only, and only to a whole outcome.
      upd(open.id, `question = 'rewritten'`),
      upd(open.id, `expires_at = now() + interval '10 years'`),
      upd(open.id, `agent = 'trusted-bot'`),
      upd(open.id, `session = 's-2'`),
      upd(open.id, `runtime = 'evil'`),
      upd(open.id, `created_at = '2000-01-01'`),
      upd(open.id, `id = 'other'`),
      upd(open.id, `tenant_id = 'other'`),
      upd(open.id, `answer = 'no state change'`),
      upd(open.id, `answered_by = 'alice', answered_at = '2000-01-01'`),
      upd(open.id, `state = 'answered'`),
      upd(open.id, `state = 'answered', answer = 'x'`),
      upd(open.id, `state = 'expired', answer = 'x'`),
      upd(open.id, `state = 'withdrawn', answered_by = 'api'`),
      upd(open.id, `state = 'bogus'`),
      // None is asked already answered, or answered over its INSERT.
      `INSERT INTO questions (tenant_id, id, runtime, question, created_at, expires_at, state,
        answer, answered_at, answered_by)
      VALUES ('${t}', '${crypto.randomUUID()}', 'rt', 'q', now(), now() + interval '1h',
        'answered', 'forged', now(), 'api')`,
      `INSERT INTO questions (tenant_id, id, runtime, question, created_at, expires_at, state)
      VALUES ('${t}', '${done.id}', 'rt', 'q', now(), now() + interval '1h', 'pending')
      ON CONFLICT (tenant_id, id) DO UPDATE SET state = 'answered', answer = 'forged',
        answered_by = 'api'`,
      `INSERT INTO questions (tenant_id, id, runtime, question, created_at, expires_at, state)
      VALUES ('${t}', '${crypto.randomUUID()}', 'rt', '${"x".repeat(QUESTION_MAX_CHARS + 1)}',
        now(), now() + interval '1h', 'pending')`,
      // No removal, no table lock, no DDL.
      `DELETE FROM questions`,
      `DELETE FROM questions WHERE id = '${done.id}'`,
      `TRUNCATE questions`,
      `LOCK TABLE questions IN ACCESS EXCLUSIVE MODE`,
      `LOCK TABLE questions IN EXCLUSIVE MODE`,
      `LOCK TABLE questions IN SHARE MODE`,
      `ALTER TABLE questions DISABLE ROW LEVEL SECURITY`,
      `ALTER TABLE questions DISABLE TRIGGER questions_final`,
      `DROP TRIGGER questions_final ON questions`,
      `DROP POLICY questions_own ON questions`,
      `CREATE RULE evil AS ON UPDATE TO questions DO INSTEAD NOTHING`,
    ], REFUSED);
    // No table-wide UPDATE or DELETE; of the columns, the outcome's only.
    const [priv] = await sql`SELECT has_table_privilege('questions', 'UPDATE') AS upd,
      has_table_privilege('questions', 'DELETE') AS del,
      has_table_privilege('questions', 'TRUNCATE') AS trunc,
      has_column_privilege('questions', 'question', 'UPDATE') AS question,
      has_column_privilege('questions', 'expires_at', 'UPDATE') AS expires,
      has_column_privilege('questions', 'answer', 'UPDATE') AS answer`;
    assert.deepEqual({ ...priv }, {
      upd: false,
      del: false,
      trunc: false,
      question: false,
      expires: false,
      answer: true,
    });
    // Its own pending question it may answer, but not backdate the answer.
    const [won] = await asTenant(
      sql,
      t,
      (tx) =>
        tx.unsafe(`UPDATE questions SET state = 'answered', answer = 'raw', answered_by = 'api',
          answered_at = '2000-01-01' WHERE id = '${open.id}' RETURNING answered_at`),
    );
    assert.ok(Date.now() - (won.answered_at as Date).getTime() < 60_000, "answered_at is now");
    assert.deepEqual(await waiting, { answer: "raw" });
  } finally {
    await sql.end();
  }
  // Not even the owner changes a finished question (on a raw connection: its refusal named).
  const su = postgres(pg.ownerUrl, { max: 1, onnotice: () => {} });
  try {
    await assertRefused(su, null, [
      `UPDATE questions SET answer = 'owner' WHERE id = '${done.id}'`,
      `UPDATE questions SET state = 'pending' WHERE id = '${done.id}'`,
    ], /QUESTION_FINAL/);
  } finally {
    await su.end();
  }
  const final = await a.store.get(done.id);
  assert.equal(final?.answer, "the real answer");
  assert.equal(final?.answered_by, "console");
  assert.equal(final?.question, "answered one");
});

Deno.test("QuestionBoard (PostgreSQL): the runtime's role cannot read, answer, plant or move into another tenant's questions", async () => {
  await using acme = await runtimes(1);
  await using globex = await runtimes(2);
  const [g, g2] = globex.list;
  const theirs = g.board.ask(ask("globex's question"), 60_000);
  const target = await onlyPending(g2.board);
  const mine = settledLater(acme.list[0].board.ask(ask("acme's question"), 60_000));
  const own = await onlyPending(acme.list[0].board);
  const globexRow = () =>
    owner.transaction((tx) =>
      tx`SELECT state, answer, answered_by, question, expires_at FROM questions
        WHERE tenant_id = ${globex.tenant} AND id = ${target.id}`
    );
  const before = [...await globexRow()];
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  const a = acme.tenant;
  const victim = globex.tenant;
  try {
    // Nothing of globex is visible, naming acme, nobody or an empty tenant.
    for (const tenant of [a, null, ""]) {
      const [{ n }] = await asTenant(
        sql,
        tenant,
        (tx) =>
          tx.unsafe(`SELECT count(*)::int AS n FROM questions WHERE tenant_id = '${victim}'
            OR id = '${target.id}'`),
      );
      assert.equal(n, 0, `seen naming ${tenant}`);
    }
    // Answering it by id, or all of them, touches nothing.
    for (const tenant of [a, null]) {
      for (
        const stmt of [
          `UPDATE questions SET state = 'answered', answer = 'evil', answered_by = 'api'
            WHERE id = '${target.id}'`,
          `UPDATE questions SET state = 'answered', answer = 'evil', answered_by = 'api'
            WHERE tenant_id = '${victim}'`,
          // Everything it can see but its own.
          `UPDATE questions SET state = 'withdrawn' WHERE id <> '${own.id}'`,
        ]
      ) {
        const r = await asTenant(sql, tenant, (tx) => tx.unsafe(stmt));
        assert.equal(r.count, 0, `${stmt} (${tenant})`);
      }
    }
    // Planting one in globex, answering it over an INSERT, moving one's own there.
    await assertRefused(sql, a, [
      `INSERT INTO questions (tenant_id, id, runtime, question, created_at, expires_at, state)
      VALUES ('${victim}', '${crypto.randomUUID()}', 'rt', 'phish', now(),
        now() + interval '1h', 'pending')`,
      `INSERT INTO questions (tenant_id, id, runtime, question, created_at, expires_at, state)
      VALUES ('${victim}', '${target.id}', 'rt', 'q', now(), now() + interval '1h', 'pending')
      ON CONFLICT (tenant_id, id) DO UPDATE SET state = 'answered', answer = 'evil',
        answered_by = 'api'`,
      `UPDATE questions SET tenant_id = '${victim}' WHERE id = '${own.id}'`,
    ], REFUSED);
    await assertRefused(sql, null, [
      `INSERT INTO questions (tenant_id, id, runtime, question, created_at, expires_at, state)
      VALUES ('${victim}', '${crypto.randomUUID()}', 'rt', 'phish', now(),
        now() + interval '1h', 'pending')`,
    ], REFUSED);
    // Through the board, naming its own tenant: unknown.
    assert.equal(await acme.list[0].board.answer(target.id, "evil", "api"), "unknown");
  } finally {
    await sql.end();
  }
  assert.deepEqual([...await globexRow()], before);
  assert.equal(await g2.board.answer(target.id, "globex's answer", "console"), "ok");
  assert.deepEqual(await theirs, { answer: "globex's answer" });
  assert.deepEqual(acme.list[0].audit.rows, []);
  assert.equal(await acme.list[0].board.answer(own.id, "fine", "console"), "ok");
  assert.deepEqual(await mine, { answer: "fine" });
});

// ---------------------------------------------------------------------------------------------
// A stopped database: waited out, or a refusal; never an answer nobody gave

Deno.test("QuestionBoard (PostgreSQL): a database down while A waits is waited out, and the answer given after it is returned", async () => {
  using _faults = clientFaultsTolerated();
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  let settled: AskOutcome | "rejected" | undefined;
  const answer = a.board.ask(ask(), 30_000);
  answer.then((x) => settled = x, () => settled = "rejected");
  const listed = await onlyPending(b.board);
  try {
    await pg.stop();
    await new Promise((res) => setTimeout(res, 1_500));
    assert.equal(settled, undefined, "nothing is returned while the board is unreachable");
  } finally {
    await pg.start();
  }
  assert.equal(
    await until(() => b.board.answer(listed.id, "after", "console").catch(() => undefined)),
    "ok",
  );
  assert.deepEqual(await answer, { answer: "after" });
  assert.deepEqual(a.audit.rows, [questionRow("ANSWERED", "console")]);
});

Deno.test("QuestionBoard (PostgreSQL): a database still down at the deadline is a timeout, never an answer", async () => {
  using _faults = clientFaultsTolerated();
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  const answer = a.board.ask(ask(), 1_500);
  const listed = await onlyPending(b.board);
  try {
    await pg.stop();
    assert.deepEqual(await answer, { timeout: true });
    assert.deepEqual(a.audit.rows, [questionRow("ASK_TIMEOUT")]);
  } finally {
    await pg.start();
  }
  // Past its time, the board refuses an answer, and nobody lists it as pending.
  assert.equal(
    await until(() => b.board.answer(listed.id, "late", "console").catch(() => undefined)),
    "not_pending",
  );
  assert.deepEqual(await b.board.list("pending"), []);
});

Deno.test("QuestionBoard (PostgreSQL): an ask while the database is stopped rejects ASK_UNAVAILABLE, within the pool's bounds: no timeout, no row; a push refuses the same way", async () => {
  using _faults = clientFaultsTolerated();
  await using rt = await runtimes(2);
  const [a, b] = rt.list;
  try {
    await pg.stop();
    const t0 = performance.now();
    await rejectsWith(a.board.ask(ask(), 60_000), "ASK_UNAVAILABLE");
    // The pool's bound (two statement timeouts and a connect, 1 s each), on a loaded machine:
    // refused, never left to the 60 s timeout.
    const ms = performance.now() - t0;
    assert.ok(ms < ANSWER_BOUND_MS, `refused after ${ms} ms`);
    assert.deepEqual(a.audit.rows, []);
    // A login's push is not told the operator let it time out.
    const push = consolePushChannel(a.board, { id: "s-1", agent: "alice" }, 60_000);
    await rejectsWith(
      push.ask({ vendor: "Okta", number: "42", origin: "https://bank.test" }),
      "ASK_UNAVAILABLE",
    );
  } finally {
    await pg.start();
  }
  assert.deepEqual(await until(() => b.board.list().catch(() => undefined)), []);
});

Deno.test(clusterTeardown("QuestionBoard (PostgreSQL) tests", pg, owner));
