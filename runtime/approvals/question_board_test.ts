import assert from "node:assert/strict";
import { MemorySink } from "../../tests/helpers/memory_sink.ts";
import { until } from "../../tests/helpers/until.ts";
import { OmotaiError } from "../errors.ts";
import { QUESTION_MAX_CHARS, UNRUN_BY } from "../store/decision_store.ts";
import { MemoryDecisionStore } from "../store/memory_decision_store.ts";
import { QuestionBoard, type QuestionEvent } from "./question_board.ts";

/** A board over this process's memory (the embedded store). */
function memoryBoard(sink: MemorySink): QuestionBoard {
  return new QuestionBoard(new MemoryDecisionStore("question"), sink);
}

/** The only pending question, once posted. */
async function onlyPending(questions: QuestionBoard) {
  const list = await until(async () => {
    const pending = await questions.list("pending");
    return pending.length > 0 ? pending : undefined;
  });
  assert.equal(list.length, 1);
  return list[0];
}

const QUESTION = "Which invoice, planted-q-93a1?";
const ANSWER = "The March one, planted-a-77c2";

const ASK = { question: QUESTION, agent: "alice", session: "s-1" };

Deno.test("QuestionBoard.ask() resolves with the operator's answer", async () => {
  const sink = new MemorySink();
  const questions = memoryBoard(sink);
  const answer = questions.ask(ASK, 60_000);
  const q = await onlyPending(questions);
  assert.equal(q.question, QUESTION);
  assert.equal(q.agent, "alice");
  assert.equal(q.state, "pending");
  assert.equal(await questions.answer(q.id, ANSWER, "console"), "ok");
  assert.deepEqual(await answer, { answer: ANSWER });
  const [done] = await questions.list("answered");
  assert.equal(done.state, "answered");
  assert.equal(done.answer, ANSWER);
  assert.equal(done.answered_by, "console");
  assert.equal(await questions.answer(q.id, "again", "console"), "not_pending");
  assert.equal(await questions.answer("nope", "x", "console"), "unknown");
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

Deno.test("QuestionBoard.ask() times out with {timeout: true} and an ASK_TIMEOUT row", async () => {
  const sink = new MemorySink();
  const questions = memoryBoard(sink);
  const events: QuestionEvent[] = [];
  questions.subscribe((e) => events.push(e));
  assert.deepEqual(await questions.ask(ASK, 5), { timeout: true });
  assert.equal((await questions.list())[0].state, "expired");
  assert.deepEqual(events.map((e) => e.type), ["added", "expired"]);
  assert.equal(sink.rows[0].reason, "ASK_TIMEOUT");
});

Deno.test("QuestionBoard.ask() rejects ASK_WITHDRAWN when its call is aborted", async () => {
  const sink = new MemorySink();
  const questions = memoryBoard(sink);
  const controller = new AbortController();
  const asked = questions.ask(ASK, 60_000, controller.signal);
  const id = (await onlyPending(questions)).id;
  controller.abort();
  await assert.rejects(asked, (err) => err instanceof OmotaiError && err.code === "ASK_WITHDRAWN");
  assert.deepEqual(await questions.list("pending"), []);
  assert.equal(await questions.answer(id, ANSWER, "console"), "not_pending");
  assert.equal(sink.rows[0].reason, "ASK_WITHDRAWN");
});

Deno.test("QuestionBoard audit rows carry neither the question nor the answer", async () => {
  const sink = new MemorySink();
  const questions = memoryBoard(sink);
  const a = questions.ask(ASK, 60_000);
  await questions.answer((await onlyPending(questions)).id, ANSWER, "api");
  await a;
  await questions.ask(ASK, 1);
  const text = JSON.stringify(sink.rows);
  assert.equal(sink.rows.length, 2);
  for (const secret of ["planted-q-93a1", "planted-a-77c2", "invoice", "March"]) {
    assert.equal(text.includes(secret), false, `${secret} reached the audit`);
  }
});

Deno.test("QuestionBoard caps questions and answers at QUESTION_MAX_CHARS", async () => {
  const questions = memoryBoard(new MemorySink());
  const asked = questions.ask({ ...ASK, question: "q".repeat(5_000) }, 60_000);
  const q = await onlyPending(questions);
  assert.equal(q.question.length, QUESTION_MAX_CHARS);
  await questions.answer(q.id, "a".repeat(5_000), "console");
  const outcome = await asked;
  assert.ok("answer" in outcome);
  assert.equal(outcome.answer.length, QUESTION_MAX_CHARS);
});

Deno.test("QuestionBoard.ask() whose answer's row cannot be written rejects AUDIT_UNAVAILABLE; the answer is not kept", async () => {
  const sink = new MemorySink();
  const questions = memoryBoard(sink);
  const asked = questions.ask(ASK, 60_000);
  const id = (await onlyPending(questions)).id;
  sink.failing = true;
  assert.equal(await questions.answer(id, ANSWER, "console"), "ok");
  await assert.rejects(
    asked,
    (err) => err instanceof OmotaiError && err.code === "AUDIT_UNAVAILABLE",
  );
  const [after] = await questions.list("answered");
  assert.equal(after.state, "withdrawn");
  assert.equal(after.answer, undefined, "an answer nobody got is not kept");
  assert.equal(after.answered_by, UNRUN_BY);
  assert.equal(await questions.answer(id, ANSWER, "console"), "not_pending");
});

Deno.test("QuestionBoard.subscribe() hears added and answered; close() withdraws", async () => {
  const questions = memoryBoard(new MemorySink());
  const events: QuestionEvent[] = [];
  const stop = questions.subscribe((e) => events.push(e));
  const a = questions.ask(ASK, 60_000);
  await questions.answer((await onlyPending(questions)).id, ANSWER, "console");
  await a;
  assert.deepEqual(events.map((e) => e.type), ["added", "answered"]);
  stop();
  const b = questions.ask(ASK, 60_000);
  await questions.close();
  await assert.rejects(b, (err) => err instanceof OmotaiError && err.code === "ASK_WITHDRAWN");
  assert.equal(events.length, 2);
  assert.deepEqual(await questions.list("pending"), []);
});
