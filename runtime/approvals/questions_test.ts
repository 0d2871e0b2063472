import assert from "node:assert/strict";
import { MemorySink } from "../../tests/helpers/memory_sink.ts";
import { OmotaiError } from "../errors.ts";
import { HumanQuestions, QUESTION_MAX_CHARS, type QuestionEvent } from "./questions.ts";

const QUESTION = "Which invoice, planted-q-93a1?";
const ANSWER = "The March one, planted-a-77c2";

const ASK = { question: QUESTION, agent: "alice", session: "s-1" };

Deno.test("HumanQuestions.ask() resolves with the operator's answer", async () => {
  const sink = new MemorySink();
  const questions = new HumanQuestions(sink);
  const answer = questions.ask(ASK, 60_000);
  const [q] = questions.list("pending");
  assert.equal(q.question, QUESTION);
  assert.equal(q.agent, "alice");
  assert.equal(q.state, "pending");
  assert.equal(questions.answer(q.id, ANSWER, "console"), "ok");
  assert.deepEqual(await answer, { answer: ANSWER });
  const [done] = questions.list("answered");
  assert.equal(done.state, "answered");
  assert.equal(done.answer, ANSWER);
  assert.equal(done.answered_by, "console");
  assert.equal(questions.answer(q.id, "again", "console"), "not_pending");
  assert.equal(questions.answer("nope", "x", "console"), "unknown");
  assert.deepEqual(sink.rows, [{
    session: "s-1",
    agent: "alice",
    kind: "ask_human",
    source: "operator",
    decision: "event",
    reason: "ANSWERED",
    rule: "console",
  }]);
});

Deno.test("HumanQuestions.ask() times out with {timeout: true} and an ASK_TIMEOUT row", async () => {
  const sink = new MemorySink();
  const questions = new HumanQuestions(sink);
  const events: QuestionEvent[] = [];
  questions.subscribe((e) => events.push(e));
  assert.deepEqual(await questions.ask(ASK, 5), { timeout: true });
  assert.equal(questions.list()[0].state, "expired");
  assert.deepEqual(events.map((e) => e.type), ["added", "expired"]);
  assert.equal(sink.rows[0].reason, "ASK_TIMEOUT");
});

Deno.test("HumanQuestions.ask() rejects ASK_WITHDRAWN when its call is aborted", async () => {
  const sink = new MemorySink();
  const questions = new HumanQuestions(sink);
  const controller = new AbortController();
  const asked = questions.ask(ASK, 60_000, controller.signal);
  const id = questions.list("pending")[0].id;
  controller.abort();
  await assert.rejects(asked, (err) => err instanceof OmotaiError && err.code === "ASK_WITHDRAWN");
  assert.deepEqual(questions.list("pending"), []);
  assert.equal(questions.answer(id, ANSWER, "console"), "not_pending");
  assert.equal(sink.rows[0].reason, "ASK_WITHDRAWN");
});

Deno.test("HumanQuestions audit rows carry neither the question nor the answer", async () => {
  const sink = new MemorySink();
  const questions = new HumanQuestions(sink);
  const a = questions.ask(ASK, 60_000);
  questions.answer(questions.list("pending")[0].id, ANSWER, "api");
  await a;
  await questions.ask(ASK, 1);
  const text = JSON.stringify(sink.rows);
  assert.equal(sink.rows.length, 2);
  for (const secret of ["planted-q-93a1", "planted-a-77c2", "invoice", "March"]) {
    assert.equal(text.includes(secret), false, `${secret} reached the audit`);
  }
});

Deno.test("HumanQuestions caps questions and answers at QUESTION_MAX_CHARS", async () => {
  const questions = new HumanQuestions(new MemorySink());
  const asked = questions.ask({ ...ASK, question: "q".repeat(5_000) }, 60_000);
  const [q] = questions.list("pending");
  assert.equal(q.question.length, QUESTION_MAX_CHARS);
  questions.answer(q.id, "a".repeat(5_000), "console");
  const outcome = await asked;
  assert.ok("answer" in outcome);
  assert.equal(outcome.answer.length, QUESTION_MAX_CHARS);
});

Deno.test("HumanQuestions.answer() whose row cannot be written throws and keeps it pending", async () => {
  const sink = new MemorySink();
  const questions = new HumanQuestions(sink);
  const asked = questions.ask(ASK, 60_000);
  const id = questions.list("pending")[0].id;
  sink.failing = true;
  assert.throws(
    () => questions.answer(id, ANSWER, "console"),
    (err) => err instanceof OmotaiError && err.code === "AUDIT_UNAVAILABLE",
  );
  assert.equal(questions.list("pending").length, 1);
  sink.failing = false;
  assert.equal(questions.answer(id, ANSWER, "console"), "ok");
  assert.deepEqual(await asked, { answer: ANSWER });
});

Deno.test("HumanQuestions.subscribe() hears added and answered; close() withdraws", async () => {
  const questions = new HumanQuestions(new MemorySink());
  const events: QuestionEvent[] = [];
  const stop = questions.subscribe((e) => events.push(e));
  const a = questions.ask(ASK, 60_000);
  questions.answer(questions.list("pending")[0].id, ANSWER, "console");
  await a;
  assert.deepEqual(events.map((e) => e.type), ["added", "answered"]);
  stop();
  const b = questions.ask(ASK, 60_000);
  questions.close();
  await assert.rejects(b, (err) => err instanceof OmotaiError && err.code === "ASK_WITHDRAWN");
  assert.equal(events.length, 2);
  assert.deepEqual(questions.list("pending"), []);
});
