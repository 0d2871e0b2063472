/**
 * The PostgreSQL audit writer against a throwaway cluster: rows keep their queue order
 * across `append` and `appendSoon`, a burst becomes a few transactions, a failing store (and
 * the server stopped outright) fails closed without a secret in any log line or error, and
 * the sink heals by itself once the server is back.
 */
import assert from "node:assert/strict";
import { OmotaiError } from "../errors.ts";
import { Redactor } from "../redact/mod.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";
import { clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import type { AuditEvent, AuditRow } from "./audit_row.ts";
import type { AuditStore, Checkpoint, RecentFilter } from "./audit_store.ts";
import { PgAuditLog } from "./pg_audit_log.ts";
import { PgAuditSink } from "./pg_audit_sink.ts";
import type { ChainCheck, VerifyResult } from "./audit_chain.ts";
import { ANSWER_BOUND_MS } from "../../tests/helpers/until.ts";

const SECRET = "Sink-Planted-Secret-5c7e19";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();

let tenants = 0;
/** A fresh tenant, so each test's chain starts at row 1. */
async function freshTenant(): Promise<string> {
  const tenant = `sink-${++tenants}`;
  await addTenant(owner, tenant);
  return tenant;
}

const event = (agent: string): AuditEvent => ({
  kind: "navigate",
  source: "action",
  agent,
  origin: "https://a.test/x",
  decision: "allow",
  reason: "OK",
});

const isUnavailable = (err: unknown) =>
  err instanceof OmotaiError && err.code === "AUDIT_UNAVAILABLE";

/**
 * A store that counts the batches it is given and fails them on demand, as a store that broke
 * the port's contract would: a plain error whose message quotes a row.
 */
class Wrapped implements AuditStore {
  readonly batches: number[] = [];
  failing = false;
  /** Rows the store answers it cannot take (and with them their whole batch). */
  refuses: (e: AuditEvent) => boolean = () => false;
  readonly #inner: AuditStore;
  constructor(inner: AuditStore) {
    this.#inner = inner;
  }
  get tenant(): string {
    return this.#inner.tenant;
  }
  append(events: AuditEvent[]): Promise<AuditRow[]> {
    this.batches.push(events.length);
    if (this.failing) {
      return Promise.reject(new Error(`refused row of ${events[0]?.agent}`));
    }
    if (events.some(this.refuses)) {
      return Promise.reject(new OmotaiError("AUDIT_ROW_REFUSED", "audit row not written (22P05)"));
    }
    return this.#inner.append(events);
  }
  rows(afterSeq?: number, limit?: number): Promise<AuditRow[]> {
    return this.#inner.rows(afterSeq, limit);
  }
  recent(filter: RecentFilter): Promise<AuditRow[]> {
    return this.#inner.recent(filter);
  }
  verify(check?: ChainCheck): Promise<VerifyResult> {
    return this.#inner.verify(check);
  }
  head(): Promise<{ seq: number; hash: string }> {
    if (this.failing) return Promise.reject(new Error("head refused"));
    return this.#inner.head();
  }
  addCheckpoint(checkpoint: Checkpoint): Promise<void> {
    return this.#inner.addCheckpoint(checkpoint);
  }
  checkpoints(): Promise<Checkpoint[]> {
    return this.#inner.checkpoints();
  }
  prune(cutoff: Date): Promise<{ removed: number; anchorSeq: number }> {
    return this.#inner.prune(cutoff);
  }
}

/** What the runtime logs (`log()` writes to stderr) while it is held. */
function recordLog(): { lines: string[] } & Disposable {
  const original = console.error;
  const lines: string[] = [];
  console.error = (...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  };
  return {
    lines,
    [Symbol.dispose]() {
      console.error = original;
    },
  };
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("PgAuditSink: rows keep the order they were queued in, across append and appendSoon, turns and batches", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const store = new Wrapped(new PgAuditLog(app, await freshTenant(), { redactor: new Redactor() }));
  const sink = new PgAuditSink(store, { maxBatch: 8 });
  const waited: Promise<AuditRow>[] = [];
  const agents: string[] = [];
  for (let i = 0; i < 60; i++) {
    const agent = `r${i}`;
    agents.push(agent);
    if (i % 3 === 0) sink.append(event(agent));
    else waited.push(sink.appendSoon(event(agent)));
    // Some rows in later turns, some after a commit, most while a batch is in flight.
    if (i % 7 === 6) await tick();
    if (i % 10 === 9) await waited.at(-1);
  }
  const resolved = await Promise.all(waited);
  await sink.flush();
  const rows = await store.rows();
  assert.deepEqual(rows.map((r) => r.agent), agents);
  assert.deepEqual(rows.map((r) => r.seq), agents.map((_, i) => i + 1));
  // What each caller was given is the row as stored.
  const bySeq = new Map(rows.map((r) => [r.seq, r]));
  for (const r of resolved) assert.deepEqual(r, bySeq.get(r.seq));
  assert.ok(store.batches.length > 1 && store.batches.every((n) => n <= 8), `${store.batches}`);
  // Disposal flushes: rows queued just before it are in the chain once it resolves.
  {
    await using last = new PgAuditSink(store);
    last.append(event("d1"));
    last.append(event("d2"));
  }
  assert.deepEqual((await store.rows(60)).map((r) => r.agent), ["d1", "d2"]);
  assert.deepEqual((await store.verify()).problems, []);
  assert.equal(sink.healthy, true);
});

Deno.test("PgAuditSink: a burst of 1,000 appendSoon from concurrent callers lands in a few transactions of at most 500 rows, and the chain verifies", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const log = new PgAuditLog(app, await freshTenant(), { redactor: new Redactor() });
  const store = new Wrapped(log);
  const sink = new PgAuditSink(store);
  // Callers that arrive over a few timer turns, as a page load's requests do.
  const rows = await Promise.all(Array.from({ length: 1_000 }, async (_, i) => {
    await tick(i % 5);
    return await sink.appendSoon(event(`c${i}`));
  }));
  assert.ok(store.batches.length < 50, `${store.batches.length} transactions`);
  assert.equal(store.batches.reduce((a, b) => a + b, 0), 1_000);
  assert.deepEqual(rows.map((r) => r.seq).sort((a, b) => a - b), rows.map((_, i) => i + 1));
  // One turn's 1,200 rows: batches of at most 500, in order.
  store.batches.length = 0;
  const burst = await Promise.all(
    Array.from({ length: 1_200 }, (_, i) => sink.appendSoon(event(`b${i}`))),
  );
  assert.deepEqual(store.batches, [500, 500, 200]);
  assert.deepEqual(burst.map((r) => r.seq), burst.map((_, i) => 1_001 + i));
  const v = await log.verify();
  assert.deepEqual(v.problems, []);
  assert.equal(v.rows, 2_200);
});

Deno.test("PgAuditSink: a failed batch rejects its waiters, logs its other rows by count and code only, and fails append closed until a commit heals it", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const redactor = new Redactor();
  redactor.add([SECRET]);
  const store = new Wrapped(new PgAuditLog(app, await freshTenant(), { redactor }));
  const health: boolean[] = [];
  // No probe here: only commits heal this sink (the probe has its own test).
  const sink = new PgAuditSink(store, { onHealth: (h) => health.push(h), probeMs: 0 });
  using logs = recordLog();
  await sink.appendSoon(event("before"));
  store.failing = true;
  // One batch: a row nothing waits on and one a caller waits on.
  sink.append(event(`lost ${SECRET}`));
  const err = await sink.appendSoon(event(`denied ${SECRET}`)).then(
    () => assert.fail("a failed batch resolved"),
    (e: unknown) => e,
  );
  assert.ok(isUnavailable(err), String(err));
  assert.equal(sink.healthy, false);
  assert.deepEqual(health, [false]);
  assert.ok(
    logs.lines.some((l) => l.includes("1 queued row(s) not written (ERROR)")),
    logs.lines.join("\n"),
  );
  // Known failing: append throws at once and queues nothing.
  const sent = store.batches.length;
  assert.throws(() => sink.append(event("refused")), isUnavailable);
  await sink.flush();
  assert.equal(store.batches.length, sent);
  // appendSoon is still tried; while the store fails it rejects and the sink stays unhealthy.
  await assert.rejects(sink.appendSoon(event("still down")), isUnavailable);
  assert.deepEqual(health, [false]);
  store.failing = false;
  const back = await sink.appendSoon(event("back"));
  assert.equal(back.seq, 2);
  assert.equal(sink.healthy, true);
  assert.deepEqual(health, [false, true]);
  sink.append(event("after"));
  await sink.flush();
  assert.deepEqual((await store.rows()).map((r) => r.agent), ["before", "back", "after"]);
  assert.deepEqual((await store.verify()).problems, []);
  const seen = [...logs.lines, (err as Error).message].join("\n").toLowerCase();
  assert.ok(!seen.includes(SECRET.toLowerCase()), seen);
  assert.ok(!seen.includes("lost") && !seen.includes("denied"), "no row text is logged");
});

Deno.test("PgAuditSink: a row the store refuses for what it holds fails alone: the rows batched beside it are kept in order, in a few statements, and the sink stays healthy", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const store = new Wrapped(new PgAuditLog(app, await freshTenant(), { redactor: new Redactor() }));
  store.refuses = (e) => e.agent?.startsWith("poison") ?? false;
  const health: boolean[] = [];
  const sink = new PgAuditSink(store, { onHealth: (h) => health.push(h), probeMs: 0 });
  using logs = recordLog();
  // One turn of the event loop: one batch of 64, two of them poison (one awaited, one not).
  const waits: Promise<string>[] = [];
  for (let i = 0; i < 64; i++) {
    if (i === 40) {
      sink.append(event("poison-unawaited"));
      continue;
    }
    const agent = i === 17 ? "poison-awaited" : `ok-${i}`;
    waits.push(
      sink.appendSoon(event(agent)).then(
        (row) => `kept ${row.agent}`,
        (err) => isUnavailable(err) ? `denied ${agent}` : `other ${agent}: ${err}`,
      ),
    );
  }
  const outcomes = await Promise.all(waits);
  assert.deepEqual(outcomes.filter((o) => !o.startsWith("kept")), ["denied poison-awaited"]);
  assert.equal(sink.healthy, true);
  assert.deepEqual(health, []);
  const kept = (await store.rows()).map((r) => r.agent);
  const good = Array.from({ length: 64 }, (_, i) => i).filter((i) => i !== 17 && i !== 40);
  assert.deepEqual(kept, good.map((i) => `ok-${i}`));
  // Halves, not one statement per row: 64 rows with two bad ones in a handful of tries.
  assert.ok(store.batches.length <= 26, `${store.batches.length} statements`);
  assert.ok(
    logs.lines.some((l) => l.includes("1 queued row(s) not written (AUDIT_ROW_REFUSED)")),
    logs.lines.join("\n"),
  );
  // Still healthy: append keeps queueing, and the chain verifies.
  sink.append(event("after"));
  await sink.flush();
  assert.equal((await store.rows()).at(-1)?.agent, "after");
  assert.deepEqual((await store.verify()).problems, []);
});

Deno.test("PgAuditSink: while failing it asks the store now and then, and is healthy again once the store answers, with no row written", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl });
  const store = new Wrapped(new PgAuditLog(app, await freshTenant(), { redactor: new Redactor() }));
  const health: boolean[] = [];
  const sink = new PgAuditSink(store, { onHealth: (h) => health.push(h), probeMs: 50 });
  using _logs = recordLog();
  store.failing = true;
  await assert.rejects(sink.appendSoon(event("down")), isUnavailable);
  assert.equal(sink.healthy, false);
  await tick(200);
  assert.equal(sink.healthy, false, "still failing: still unhealthy");
  const batches = store.batches.length;
  store.failing = false;
  const deadline = Date.now() + 5_000;
  while (!sink.healthy && Date.now() < deadline) await tick(20);
  assert.equal(sink.healthy, true, "healed by the probe");
  assert.deepEqual(health, [false, true]);
  assert.equal(store.batches.length, batches, "no row was written to find out");
  sink.append(event("after"));
  await sink[Symbol.asyncDispose]();
  assert.deepEqual((await store.rows()).map((r) => r.agent), ["after"]);
});

Deno.test("PgAuditSink: with the server stopped appendSoon rejects and then append throws AUDIT_UNAVAILABLE; once it is back the next appendSoon commits, append works again, the chain verifies and the secret is nowhere", async () => {
  await using app = await PgDatabase.open({ url: pg.appUrl, connectTimeoutS: 2 });
  const redactor = new Redactor();
  redactor.add([SECRET]);
  const log = new PgAuditLog(app, await freshTenant(), { redactor });
  const health: boolean[] = [];
  const sink = new PgAuditSink(log, { onHealth: (h) => health.push(h) });
  using logs = recordLog();
  const messages: string[] = [];
  await sink.appendSoon(event(`up ${SECRET}`));
  sink.append(event("up 2"));
  await sink.flush();
  await pg.stop();
  try {
    // Not yet known down: append queues; its batch fails with the appendSoon beside it.
    sink.append(event(`lost ${SECRET}`));
    const t0 = performance.now();
    const err = await sink.appendSoon(event(`denied ${SECRET}`)).then(
      () => assert.fail("a row was kept with the server stopped"),
      (e: unknown) => e,
    );
    assert.ok(isUnavailable(err), String(err));
    messages.push((err as Error).message);
    assert.ok(performance.now() - t0 < ANSWER_BOUND_MS, `took ${performance.now() - t0} ms`);
    assert.equal(sink.healthy, false);
    // Now known down: append throws at once (and queues nothing).
    assert.throws(() => {
      try {
        sink.append(event(`refused ${SECRET}`));
      } catch (e) {
        messages.push((e as Error).message);
        throw e;
      }
    }, isUnavailable);
  } finally {
    await pg.start();
  }
  // The pool finds the server again on its own; the sink with it, through appendSoon.
  const deadline = Date.now() + 30_000;
  let recovered: AuditRow | undefined;
  while (!recovered) {
    try {
      recovered = await sink.appendSoon(event("recovered"));
    } catch (e) {
      assert.ok(isUnavailable(e), String(e));
      messages.push((e as Error).message);
      assert.throws(() => sink.append(event("refused")), isUnavailable);
      assert.ok(Date.now() < deadline, "the sink did not recover within 30 s");
      await tick(100);
    }
  }
  assert.equal(sink.healthy, true);
  assert.deepEqual(health, [false, true]);
  sink.append(event("after"));
  await sink.flush();
  const rows = await log.rows();
  assert.deepEqual(rows.map((r) => r.agent), ["up [redacted]", "up 2", "recovered", "after"]);
  assert.deepEqual((await log.verify()).problems, []);
  assert.ok(
    logs.lines.some((l) => l.includes("1 queued row(s) not written")),
    logs.lines.join("\n"),
  );
  const seen = [...logs.lines, ...messages, JSON.stringify(rows)].join("\n").toLowerCase();
  assert.ok(!seen.includes(SECRET.toLowerCase()), seen);
});

Deno.test(clusterTeardown("PgAuditSink tests", pg, owner));
