/**
 * One contract for `DecisionStore` over both adapters: in memory (one runtime) and PostgreSQL
 * (two pools as the runtime's non-owner role, a fresh tenant per vector: two runtimes of a
 * tenant, the database's clock), for both kinds (approvals, questions). The same vectors run
 * against all: a record is posted pending and listed; a human's outcome wins once and the
 * rest learn `not_pending` (or `unknown`); of racing outcomes exactly one wins; a record past
 * its time takes no outcome and is not listed; `unrun` moves an acted-on outcome once;
 * `listen` hears every change. (What a runtime may not do to another tenant's rows, and the
 * tables' triggers, are PostgreSQL's alone: `pg_decision_store_test.ts`.)
 */
import assert from "node:assert/strict";
import { pendingApproval } from "../../tests/helpers/approvals.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import {
  type DecisionKind,
  type DecisionRecord,
  type DecisionStore,
  type HumanOutcome,
  type HumanQuestion,
  QUESTION_MAX_CHARS,
  UNRUN_BY,
} from "./decision_store.ts";
import { MemoryDecisionStore } from "./memory_decision_store.ts";
import { PgDatabase } from "./pg_database.ts";
import { PgDecisionStore } from "./pg_decision_store.ts";
import { addTenant } from "./pg_tenants.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
const poolA = await PgDatabase.open({ url: pg.appUrl });
const poolB = await PgDatabase.open({ url: pg.appUrl });
let tenants = 0;

/** Two runtimes' views of one kind's records (the same object, in memory). */
interface Pair<K extends DecisionKind> extends AsyncDisposable {
  a: DecisionStore<K>;
  b: DecisionStore<K>;
}

interface Adapter {
  name: string;
  open<K extends DecisionKind>(kind: K): Promise<Pair<K>>;
}

const ADAPTERS: Adapter[] = [
  {
    name: "memory",
    open(kind) {
      const store = new MemoryDecisionStore(kind);
      return Promise.resolve({
        a: store,
        b: store,
        [Symbol.asyncDispose]: () => Promise.resolve(),
      });
    },
  },
  {
    name: "postgres",
    async open(kind) {
      const tenant = `decisions-${++tenants}`;
      await addTenant(owner, tenant);
      const a = await PgDecisionStore.open(poolA, tenant, kind, { runtime: "rt-a" });
      const b = await PgDecisionStore.open(poolB, tenant, kind, { runtime: "rt-b" });
      return {
        a,
        b,
        async [Symbol.asyncDispose]() {
          await a[Symbol.asyncDispose]();
          await b[Symbol.asyncDispose]();
        },
      };
    },
  },
];

/** A fresh pending question that expires `seconds` from now. */
function pendingQuestion(seconds = 60, question = "Which card, planted-q-1?"): HumanQuestion {
  const now = Date.now();
  return {
    id: crypto.randomUUID(),
    agent: "ada",
    session: "s-1",
    question,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + seconds * 1000).toISOString(),
    state: "pending",
  };
}

/** Each kind: a fresh record, a yes and a no (or another answer), and what `unrun` makes. */
const KINDS = {
  approval: {
    fresh: (seconds?: number) => pendingApproval(seconds),
    yes: { state: "approved", by: "console" },
    other: { state: "denied", by: "api" },
    unrun: "denied",
  },
  question: {
    fresh: (seconds?: number) => pendingQuestion(seconds),
    yes: { state: "answered", answer: "the blue one", by: "console" },
    other: { state: "answered", answer: "the red one", by: "api" },
    unrun: "withdrawn",
  },
} as const;

/** Who decided a record, whichever kind it is. */
function byOf(record: DecisionRecord<DecisionKind> | undefined): string | undefined {
  if (!record) return undefined;
  return "question" in record ? record.answered_by : record.decided_by;
}

for (const adapter of ADAPTERS) {
  for (const kind of ["approval", "question"] as const) {
    const k = KINDS[kind];
    const yes = k.yes as HumanOutcome<typeof kind>;
    const other = k.other as HumanOutcome<typeof kind>;
    const test = (name: string, fn: (p: Pair<typeof kind>) => Promise<void>) =>
      Deno.test(`DecisionStore (${adapter.name}, ${kind}): ${name}`, async () => {
        await using pair = await adapter.open(kind);
        await fn(pair);
      });

    test("posted on A, listed and read on B; a human's outcome wins once", async ({ a, b }) => {
      const record = k.fresh();
      await a.post(record);
      const listed = await b.list("pending");
      assert.deepEqual(listed.map((r) => [r.id, r.state]), [[record.id, "pending"]]);
      assert.deepEqual(await b.get(record.id), record, "kept as posted");
      assert.equal(await b.decide(record.id, yes), "ok");
      const after = await a.get(record.id);
      assert.equal(after?.state, yes.state);
      assert.equal(byOf(after), "console");
      assert.equal(await a.decide(record.id, other), "not_pending");
      assert.equal(await a.decide(crypto.randomUUID(), other), "unknown");
      assert.equal(await a.end(record.id, "expired"), false, "a finished record stays finished");
      assert.deepEqual(await b.list("pending"), []);
      assert.deepEqual((await b.list("finished")).map((r) => r.id), [record.id]);
    });

    test("of racing outcomes (a human's on A and on B, the poster's timeout) exactly one wins", async ({ a, b }) => {
      for (let round = 0; round < 10; round++) {
        const record = k.fresh();
        await a.post(record);
        const [one, two, expire] = await Promise.all([
          a.decide(record.id, yes),
          b.decide(record.id, other),
          a.end(record.id, "expired"),
        ]);
        const wins = [one === "ok", two === "ok", expire].filter(Boolean).length;
        assert.equal(wins, 1, `round ${round}: ${one} ${two} ${expire}`);
        const final = await b.get(record.id);
        assert.equal(byOf(final), one === "ok" ? "console" : two === "ok" ? "api" : undefined);
        assert.equal(final?.state, expire ? "expired" : one === "ok" ? yes.state : other.state);
      }
    });

    test("a record past its time takes no outcome and is not listed; a withdrawn one neither", async ({ a, b }) => {
      const late = k.fresh(-1);
      await a.post(late);
      assert.deepEqual(await b.list("pending"), []);
      assert.equal(await b.decide(late.id, yes), "not_pending");
      assert.equal(await a.end(late.id, "expired"), true, "its poster still ends it");
      const gone = k.fresh();
      await a.post(gone);
      assert.equal(await a.end(gone.id, "withdrawn"), true);
      assert.equal(await a.end(gone.id, "expired"), false);
      assert.equal(await b.decide(gone.id, yes), "not_pending");
      assert.equal((await b.get(gone.id))?.state, "withdrawn");
      assert.equal(byOf(await b.get(gone.id)), undefined, "nobody decided it");
    });

    test("unrun moves an acted-on outcome once, and nothing else", async ({ a, b }) => {
      const record = k.fresh();
      await a.post(record);
      assert.equal(await a.unrun(record.id), false, "a pending one was not acted on");
      assert.equal(await b.decide(record.id, yes), "ok");
      assert.equal(await a.unrun(record.id), true);
      const after = await b.get(record.id);
      assert.equal(after?.state, k.unrun);
      assert.equal(byOf(after), UNRUN_BY);
      if (after && "question" in after) assert.equal(after.answer, undefined, "no answer kept");
      assert.equal(await a.unrun(record.id), false, "once");
      const ended = k.fresh();
      await a.post(ended);
      await a.end(ended.id, "expired");
      assert.equal(await a.unrun(ended.id), false);
    });

    test("listen hears every post and change, by id only", async ({ a, b }) => {
      const heard: string[] = [];
      const stop = b.listen((id) => heard.push(id));
      const record = k.fresh();
      await a.post(record);
      await a.decide(record.id, yes);
      const until = Date.now() + 10_000;
      while (heard.filter((id) => id === record.id).length < 2 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.deepEqual(heard, [record.id, record.id]);
      stop();
      await a.post(k.fresh());
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(heard.length, 2, "a removed listener hears nothing");
    });

    test("the finished list is newest first", async ({ a, b }) => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const record = k.fresh();
        await a.post(record);
        await b.decide(record.id, yes);
        ids.push(record.id);
        // The database's clock: one decision per tick.
        await new Promise((r) => setTimeout(r, 5));
      }
      assert.deepEqual((await a.list("finished")).map((r) => r.id), ids.reverse());
    });
  }

  Deno.test(`DecisionStore (${adapter.name}, question): question and answer kept at QUESTION_MAX_CHARS, NUL made U+FFFD`, async () => {
    await using pair = await adapter.open("question");
    const record = pendingQuestion(60, "q".repeat(QUESTION_MAX_CHARS + 10) + "\u0000");
    await pair.a.post(record);
    assert.equal((await pair.b.get(record.id))?.question.length, QUESTION_MAX_CHARS);
    const answer = "x\u0000" + "a".repeat(QUESTION_MAX_CHARS);
    assert.equal(
      await pair.b.decide(record.id, { state: "answered", answer, by: "console" }),
      "ok",
    );
    const kept = await pair.a.get(record.id);
    assert.equal(kept?.answer?.length, QUESTION_MAX_CHARS);
    assert.ok(kept?.answer?.startsWith("x\uFFFD"));
  });
}

Deno.test(clusterTeardown("DecisionStore contract tests", pg, poolA, poolB, owner));
