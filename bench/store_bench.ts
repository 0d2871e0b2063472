/**
 * The audit's store work, both stores in one run (issue 23's targets): the embedded SQLite
 * log and PostgreSQL on loopback (a throwaway cluster from Debian's `postgresql`, reached as
 * the runtime's role under row-level security), under R runtimes × S sessions.
 *
 * - **An action's store work**: one session appends its action's row and waits for it (what
 *   the pipeline does before an action runs): alone, and with every session of every
 *   runtime doing so in a loop. Latency per append, p50 / p99.
 * - **Sustained rows per second** across runtimes: the same load's total rows over its wall
 *   time; and the same through each runtime's `PgAuditSink` (what `omotai start --database`
 *   runs: the rows that arrive while a transaction runs go in the next one together).
 * - **At an agent's pace**: the same runtimes and sessions, each session acting once every
 *   `--pace` ms on average (exponential gaps: an agent thinks between actions), through the
 *   runtime's `PgAuditSink`, alone and with `--requests` request rows per second alongside
 *   (pages' requests, in bursts, each waiting for its row as the request guard does). The
 *   loops above never pause, so they measure queueing at saturation; this is the load the
 *   issue's "an action's store work" means. Its floors: the same server answering `SELECT 1`
 *   and committing a bare row at the same pace (a machine idle between two round trips wakes
 *   slower than a busy one).
 *
 * Every pool is warmed first (each connection has run an append): a connection's first
 * append compiles the function and plans its statements, while holding the tenant's head.
 * The loops without a writer append through their runtime's pool (a session each); the
 * writers (`PgAuditSink`) through a connection of their own, as `omotai start` runs them.
 *
 * PostgreSQL runs with one tenant (the worst case: every append of every runtime takes the
 * same tenant's lock) and with one tenant per runtime. SQLite is one process's file (its
 * sessions append in turn: it has no runtimes to share with).
 *
 * Run: deno run -A bench/store_bench.ts [--runtimes 4] [--sessions 10] [--seconds 5]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { SqliteAuditLog } from "../runtime/store/sqlite_audit_log.ts";
import type { AuditEvent } from "../runtime/store/audit_row.ts";
import { PgAuditLog } from "../runtime/store/pg_audit_log.ts";
import { PgAuditSink } from "../runtime/store/pg_audit_sink.ts";
import { Redactor } from "../runtime/redact/mod.ts";
import { openDatabase } from "../runtime/store/database.ts";
import { PgDatabase } from "../runtime/store/pg_database.ts";
import { addTenant } from "../runtime/store/pg_tenants.ts";
import { startPostgres } from "../tests/helpers/postgres.ts";
import { percentile } from "./scale_bench.ts";

/** One action's row, as the pipeline writes it. */
export const ACTION: AuditEvent = {
  session: "bench-session-0000",
  agent: "bench-agent",
  kind: "click",
  source: "action",
  origin: "https://shop.example.test/cart?id=1",
  method: "POST",
  decision: "allow",
  reason: "OK",
  module: "baseline",
  rule: "form-target",
};

/** What one measurement gives. */
export interface StoreRow {
  store: string;
  shape: string;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** `mean` ms on average, exponentially distributed: the gaps between an agent's actions. */
function gap(mean: number): number {
  return -Math.log(1 - Math.random()) * mean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `sessions` loops of `append` for `seconds`, each pausing `paceMs` on average between
 * two appends (exponential gaps), with `requestsPerSecond` rows spread over `requests` (each a
 * runtime's writer) in bursts of 20 alongside. Latency of each session's append; rows counts
 * both.
 */
export async function paced(
  sessions: ((event: AuditEvent) => Promise<unknown>)[],
  seconds: number,
  paceMs: number,
  requests: ((event: AuditEvent) => Promise<unknown>)[] = [],
  requestsPerSecond = 0,
): Promise<{ rows: number; seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let rows = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const BURST = 20;
  const every = requests.length ? 1000 * BURST * requests.length / requestsPerSecond : 0;
  await Promise.all([
    ...sessions.map(async (append) => {
      await sleep(Math.random() * paceMs);
      while (performance.now() < until) {
        const a = performance.now();
        await append(ACTION);
        latencies.push(performance.now() - a);
        rows++;
        await sleep(gap(paceMs));
      }
    }),
    // Pages send their requests whether or not the last ones' rows are kept yet: a burst
    // every `every` ms on each runtime, on the clock, each request waiting for its own row.
    ...(requestsPerSecond > 0 ? requests : []).map(async (append) => {
      const bursts: Promise<unknown>[] = [];
      let next = performance.now() + Math.random() * every;
      while (next < until) {
        await sleep(next - performance.now());
        bursts.push(
          Promise.all(Array.from({ length: BURST }, () => append(REQUEST))).then(() => {
            rows += BURST;
          }),
        );
        next += every;
      }
      await Promise.all(bursts);
    }),
  ]);
  return { rows, seconds: (performance.now() - t0) / 1000, latencies };
}

/** A page's request, as the request guard records it. */
const REQUEST: AuditEvent = {
  ...ACTION,
  kind: "request",
  source: "request",
  method: "GET",
  rule: "origin",
};

/** Runs `sessions` loops of `append` for `seconds`; latency of each append and the total. */
export async function load(
  sessions: ((event: AuditEvent) => Promise<unknown>)[],
  seconds: number,
  batch = 1,
): Promise<{ rows: number; seconds: number; latencies: number[] }> {
  const latencies: number[] = [];
  let rows = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(sessions.map(async (append) => {
    while (performance.now() < until) {
      const a = performance.now();
      await Promise.all(Array.from({ length: batch }, () => append(ACTION)));
      latencies.push(performance.now() - a);
      rows += batch;
    }
  }));
  return { rows, seconds: (performance.now() - t0) / 1000, latencies };
}

function row(
  store: string,
  shape: string,
  r: { rows: number; seconds: number; latencies: number[] },
): StoreRow {
  return {
    store,
    shape,
    rows: r.rows,
    seconds: r.seconds,
    rowsPerSecond: r.rows / r.seconds,
    p50Ms: percentile(r.latencies, 50),
    p99Ms: percentile(r.latencies, 99),
  };
}

/** A markdown table of `rows`. */
export function table(rows: StoreRow[]): string {
  const lines = [
    "| store | load | rows | rows/s | append p50 | append p99 |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.store} | ${r.shape} | ${r.rows} | ${Math.round(r.rowsPerSecond)} | ${
        r.p50Ms.toFixed(2)
      } ms | ${r.p99Ms.toFixed(2)} ms |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      runtimes: { type: "string", default: "4" },
      sessions: { type: "string", default: "10" },
      seconds: { type: "string", default: "5" },
      pace: { type: "string", default: "250" },
      requests: { type: "string", default: "2000" },
    },
  });
  const R = Number(values.runtimes);
  const S = Number(values.sessions);
  const seconds = Number(values.seconds);
  const pace = Number(values.pace);
  const requestRate = Number(values.requests);
  const results: StoreRow[] = [];
  const shape = `${R} runtimes × ${S} sessions`;

  // SQLite: one process's file; its sessions append in turn.
  {
    const dir = await Deno.makeTempDir({ prefix: "omotai-store-bench-" });
    const db = openDatabase(`${dir}/omotai.db`);
    const log = new SqliteAuditLog(db, { redactor: new Redactor() });
    const append = (e: AuditEvent) => Promise.resolve(log.append(e));
    results.push(row("sqlite", "1 session alone", await load([append], seconds)));
    results.push(row(
      "sqlite",
      `${R * S} sessions, one process`,
      await load(
        Array.from({ length: R * S }, () => append),
        seconds,
      ),
    ));
    const soon = (e: AuditEvent) => log.appendSoon(e);
    results.push(row(
      "sqlite",
      `${R * S} sessions, batched (appendSoon)`,
      await load(
        Array.from({ length: R * S }, () => soon),
        seconds,
      ),
    ));
    db.close();
    await Deno.remove(dir, { recursive: true });
  }

  await using pg = await startPostgres({ durable: true });
  {
    await using owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
    await owner.migrate();
    await addTenant(owner, "bench");
    for (let r = 0; r < R; r++) await addTenant(owner, `bench-${r}`);
    // The machine's own jitter: a round trip that writes nothing. Its p99 bounds from below
    // what any statement's p99 can be here.
    results.push(row(
      "postgres",
      "floor: SELECT 1 alone (a round trip, no write)",
      await load([() => owner.statement((sql) => sql`SELECT 1`)], seconds),
    ));
    // The floor: what the same server takes to commit one bare row durably, no chain, no
    // row-level security, no trigger. An append can only ever cost more than this.
    await owner.transaction((tx) => tx`CREATE TABLE bench_floor (id bigserial, v text)`);
    results.push(row(
      "postgres",
      "floor: 1 bare INSERT alone (no chain)",
      await load(
        [() => owner.statement((sql) => sql`INSERT INTO bench_floor (v) VALUES ('x')`)],
        seconds,
      ),
    ));
    results.push(row(
      "postgres",
      `floor: SELECT 1 at an agent's pace (every ${pace} ms)`,
      // Three times as long: an idle round trip every `pace` ms gives few samples.
      await paced([() => owner.statement((sql) => sql`SELECT 1`)], seconds * 3, pace),
    ));
    results.push(row(
      "postgres",
      `floor: 1 bare INSERT at an agent's pace (every ${pace} ms)`,
      await paced(
        [() => owner.statement((sql) => sql`INSERT INTO bench_floor (v) VALUES ('x')`)],
        seconds * 3,
        pace,
      ),
    ));
  }
  const runtimes = await Promise.all(
    Array.from({ length: R }, () => PgDatabase.open({ url: pg.appUrl, max: S })),
  );
  // Each runtime's audit writer has a connection of its own, as `omotai start` gives it.
  const writerDbs = await Promise.all(
    Array.from({ length: R }, () => PgDatabase.open({ url: pg.appUrl, max: 1 })),
  );
  try {
    const oneTenant = runtimes.map((db) =>
      new PgAuditLog(db, "bench", { redactor: new Redactor() })
    );
    // Every connection of every pool runs an append before anything is measured.
    for (let round = 0; round < 3; round++) {
      await Promise.all(
        oneTenant.flatMap((log) => Array.from({ length: S }, () => log.append([ACTION]))),
      );
    }
    const writers = writerDbs.map((db) =>
      new PgAuditLog(db, "bench", { redactor: new Redactor() })
    );
    await Promise.all(writers.map((log) => log.append([ACTION])));
    results.push(row(
      "postgres",
      "1 session alone (its runtime's writer connection)",
      await load([(e: AuditEvent) => writers[0].append([e])], seconds),
    ));
    results.push(row(
      "postgres",
      `${shape}, one tenant`,
      await load(
        oneTenant.flatMap((log) =>
          Array.from({ length: S }, () => (e: AuditEvent) => log.append([e]))
        ),
        seconds,
      ),
    ));
    const own = runtimes.map((db, r) =>
      new PgAuditLog(db, `bench-${r}`, { redactor: new Redactor() })
    );
    results.push(row(
      "postgres",
      `${shape}, a tenant per runtime`,
      await load(
        own.flatMap((log) => Array.from({ length: S }, () => (e: AuditEvent) => log.append([e]))),
        seconds,
      ),
    ));
    // What `omotai start --database` runs: each runtime's `PgAuditSink`, an action waiting
    // for its row (`appendSoon`) while the rows of its other sessions join the same commit.
    const sinks = writers.map((log) => new PgAuditSink(log));
    results.push(row(
      "postgres",
      `${shape}, one tenant, batched per runtime (PgAuditSink)`,
      await load(
        sinks.flatMap((sink) =>
          Array.from({ length: S }, () => (e: AuditEvent) => sink.appendSoon(e))
        ),
        seconds,
      ),
    ));
    const actions = sinks.flatMap((sink) =>
      Array.from({ length: S }, () => (e: AuditEvent) => sink.appendSoon(e))
    );
    const requests = sinks.map((sink) => (e: AuditEvent) => sink.appendSoon(e));
    results.push(row(
      "postgres",
      `${shape}, one tenant, an action every ${pace} ms per session (PgAuditSink)`,
      await paced(actions, seconds, pace),
    ));
    results.push(row(
      "postgres",
      `${shape}, one tenant, an action every ${pace} ms per session, ${requestRate} request rows/s ` +
        `alongside (latency: actions; rows: both)`,
      await paced(actions, seconds, pace, requests, requestRate),
    ));
    for (const sink of sinks) await sink[Symbol.asyncDispose]();
    for (const log of [...oneTenant, ...own]) {
      const v = await log.verify();
      if (!v.ok) throw new Error(`${log.tenant}: chain broken: ${v.problems[0]}`);
    }
  } finally {
    for (const db of [...runtimes, ...writerDbs]) await db[Symbol.asyncDispose]();
  }
  console.log(
    `audit store work, ${seconds} s per load, ${navigator.hardwareConcurrency} cores, ` +
      `load average ${Deno.loadavg().map((x) => x.toFixed(2)).join(" ")}`,
  );
  console.log("");
  console.log(table(results));
}
