/**
 * An attacker's pass over `audit_append(p_tenant, p_rows)` (pg_migration_audit_chain.ts: the
 * database places and hashes the rows it is given), runtimes of one tenant appending at once
 * through `PgAuditLog.append`, and the tenant-bound `live_update` /
 * `live_end` (pg_migration_live_tenant.ts): a compromised runtime on a raw connection with its
 * own login, bound to a tenant (`app_tenant()`) or not. Every test asserts the SECURE
 * behaviour: it passes when the attack fails.
 *
 * An unbound login may name any tenant (`set_config` is unprivileged; docs/deploy.md): for it
 * the promise is only that `audit_append` gives nothing that `set_config` did not already.
 */
import assert from "node:assert/strict";
import type postgres from "postgres";
import { Redactor } from "../redact/mod.ts";
import { OmotaiError } from "../errors.ts";
import { PgAuditLog } from "./pg_audit_log.ts";
import {
  AUDIT_FIELDS,
  type AuditEvent,
  auditFields,
  type AuditRow,
  chainedRow,
  rowTail,
} from "./audit_row.ts";
import { PgDatabase } from "./pg_database.ts";
import { PgLiveSessions } from "./pg_live_sessions.ts";
import { addTenant } from "./pg_tenants.ts";
import { asTenant, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import {
  append,
  appendIn,
  batch as batchAt,
  json,
  login as attackLogin,
  problems as problemsOf,
  raw,
  type Rec,
  refusal,
  timed,
} from "../../tests/helpers/audit_attack.ts";
import { ANSWER_BOUND_MS } from "../../tests/helpers/until.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
/** A runtime login of its own, bound to `tenant` when one is given (docs/deploy.md). */
const login = (name: string, tenant?: string) => attackLogin(pg, owner, name, tenant);
/** The problems `verify()` finds in `tenant`'s chain (none: it verifies). */
const problems = (tenant: string) => problemsOf(owner, tenant);
const TENANTS = [
  "acme",
  "globex",
  "open-co",
  "forge-co",
  "stall-co",
  "race-co",
  "live-a",
  "live-b",
];
for (const t of TENANTS) await addTenant(owner, t);

const ACME_URL = await login("aa_acme", "acme");
const GLOBEX_URL = await login("aa_globex", "globex");
const RACE_URLS = [await login("aa_race_1", "race-co"), await login("aa_race_2", "race-co")];
const LIVE_A_URL = await login("aa_live_a", "live-a");
/** The unbound login: names its tenant with app.tenant_id. */
const UNBOUND_URL = pg.appUrl;

const HONEST: AuditEvent = { kind: "honest", source: "action", decision: "allow" };

// globex: the victim, written only by its own runtime (its bound login) with honest rows.
{
  await using db = await PgDatabase.open({ url: GLOBEX_URL });
  await new PgAuditLog(db, "globex", { redactor: new Redactor() }).append([HONEST, HONEST]);
}
{
  await using db = await PgDatabase.open({ url: ACME_URL });
  await new PgAuditLog(db, "acme", { redactor: new Redactor() }).append([HONEST]);
}

/** A row as the table's columns (what PgAuditLog sends). */
function record(row: AuditRow): Rec {
  return {
    ...Object.fromEntries(AUDIT_FIELDS.map((f) => [f, row[f]])),
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

/** One time for every row built here: the same rows, built twice, are the same rows. */
const TS = new Date().toISOString();

/** `n` rows as `audit_append` takes them: their fields and their hash's tail (no place). */
const batch = (n: number, kind = "forged") => batchAt(n, kind, TS);

/** `n` rows correctly chained from `head`, for a plain INSERT. */
function chain(head: { seq: number; hash: string }, n: number, kind = "forged"): Rec[] {
  const out: Rec[] = [];
  let seq = head.seq;
  let prev = head.hash;
  const ts = TS;
  for (let i = 0; i < n; i++) {
    const row = chainedRow({ kind, source: "action", decision: "allow" }, {
      seq: ++seq,
      ts,
      prevHash: prev,
    }, (s) => s);
    prev = row.hash;
    out.push(record(row));
  }
  return out;
}

/** The tenant's head, as the owner sees it. */
async function headOf(tenant: string): Promise<{ seq: number; hash: string }> {
  const [h] = await owner.transaction((tx) =>
    tx<{ seq: number; hash: string }[]>`SELECT head_seq::int AS seq, head_hash AS hash
      FROM audit_heads WHERE tenant_id = ${tenant}`
  );
  return h;
}

/** Every tenant's row count and head (what an attack must not change). */
async function state(): Promise<Record<string, { rows: number; head: number }>> {
  const rows = await owner.transaction((tx) =>
    tx<{ id: string; rows: number; head: number }[]>`SELECT t.id,
      (SELECT count(*)::int FROM audit_events e WHERE e.tenant_id = t.id) AS rows,
      (SELECT head_seq::int FROM audit_heads h WHERE h.tenant_id = t.id) AS head
      FROM tenants t ORDER BY t.id`
  );
  return Object.fromEntries(rows.map((r) => [r.id, { rows: r.rows, head: r.head }]));
}

/** An honest append through PgAuditLog: "appended" or its error code and message. */
function honestAppend(log: PgAuditLog): Promise<string> {
  return log.append([HONEST]).then(
    () => "appended",
    (err: Error) => err instanceof OmotaiError ? `${err.code}: ${err.message}` : err.message,
  );
}

// ---------------------------------------------------------------------------------------------
// Writing into another tenant

Deno.test("bound login: audit_append naming another tenant writes nothing and is refused TENANT_UNKNOWN, whatever rows and app.tenant_id", async () => {
  const before = await state();
  const g = await headOf("globex");
  const sql = raw(ACME_URL);
  try {
    const batches = [
      json(batch(1)),
      json(batch(3)),
      // Rows as the previous release sent them: a place and hash of their own, no tail.
      json(chain(g, 1)),
      json(chain({ seq: 0, hash: "x" }, 1)),
      "[]",
      null,
    ];
    for (const rows of batches) {
      assert.equal(await append(sql, "globex", rows), "23503 TENANT_UNKNOWN", String(rows));
      for (const named of ["globex", "acme", ""]) {
        const r = await asTenant(sql, named, (tx) => appendIn(tx, "globex", rows));
        assert.equal(r, "23503 TENANT_UNKNOWN", `${named}: ${rows}`);
      }
    }
  } finally {
    await sql.end();
  }
  assert.deepEqual(await state(), before);
});

Deno.test("unbound login: audit_append into another tenant is exactly what set_config + INSERT already allowed (RLS lets the function's own set_config through); the chain still verifies", async () => {
  const sql = raw(UNBOUND_URL);
  try {
    // No tenant named: a plain INSERT is refused by RLS ...
    const h0 = await headOf("open-co");
    const rows = chain(h0, 1).map((r) => ({ ...r, tenant_id: "open-co" }));
    const plain = await sql`INSERT INTO audit_events ${sql(rows)}`.then(
      () => "inserted",
      refusal,
    );
    assert.equal(plain, "23503 TENANT_UNKNOWN");
    // ... and with set_config it goes in, as audit_append (which sets it itself) does.
    await asTenant(sql, "open-co", (tx) => tx`INSERT INTO audit_events ${tx(rows)}`);
    assert.equal(await append(sql, "open-co", json(batch(2))), "appended");
  } finally {
    await sql.end();
  }
  assert.deepEqual(await problems("open-co"), []);
  assert.equal((await headOf("open-co")).seq, 3);
});

Deno.test("a row's tenant_id (or any unknown key) in the JSON is ignored: rows land in p_tenant only", async () => {
  const before = await state();
  for (const url of [ACME_URL, UNBOUND_URL]) {
    const sql = raw(url);
    try {
      const rows = batch(2, "own").map((r) => ({
        ...r,
        tenant_id: "globex",
        TENANT_ID: "globex",
        "tenant_id ": "globex",
        extra: "x",
      }));
      assert.equal(await append(sql, "acme", json(rows)), "appended");
    } finally {
      await sql.end();
    }
  }
  const after = await state();
  assert.deepEqual(after.globex, before.globex);
  assert.equal(after.acme.rows, before.acme.rows + 4);
  assert.deepEqual(await problems("acme"), []);
});

Deno.test("p_tenant NULL, empty, unknown, look-alike or SQL-ish: refused TENANT_UNKNOWN for bound and unbound logins, nothing written", async () => {
  const before = await state();
  const rows = json(batch(1));
  const names = [
    null,
    "",
    " ",
    "GLOBEX",
    " globex",
    "globex ",
    "globex'--",
    "globex' OR '1'='1",
    "%",
    "nosuch",
    "globex\u200b",
  ];
  for (const [who, url] of [["bound", ACME_URL], ["unbound", UNBOUND_URL]]) {
    const sql = raw(url);
    try {
      for (const name of names) {
        assert.equal(await append(sql, name, rows), "23503 TENANT_UNKNOWN", `${who}: ${name}`);
        // With app.tenant_id already naming globex in the transaction.
        const r = await asTenant(sql, "globex", (tx) => appendIn(tx, name, rows));
        assert.equal(r, "23503 TENANT_UNKNOWN", `${who} in globex: ${name}`);
      }
    } finally {
      await sql.end();
    }
  }
  assert.deepEqual(await state(), before);
});

// ---------------------------------------------------------------------------------------------
// What a batch may hold

Deno.test("malformed batches (own tenant, bound login): refused with a clear code, nothing partial is written, places the caller names are ignored, and the chain verifies", async () => {
  const sql = raw(ACME_URL);
  const results: Record<string, string> = {};
  const expected: Record<string, string> = {};
  const before = await state();
  try {
    const h = await headOf("acme");
    const ok = (n: number) => batch(n, "own");
    const with_ = (rows: Rec[], i: number, patch: Record<string, unknown>) =>
      rows.map((r, j) => (j === i ? { ...r, ...patch } : r));
    const invalid = "22023 AUDIT_ROWS_INVALID";
    const cases: [string, string | null, string][] = [
      ["empty array", "[]", invalid],
      ["object", json(ok(1)[0]), invalid],
      ["string", `"rows"`, invalid],
      ["number", "42", invalid],
      ["JSON null", "null", invalid],
      ["array of scalars", "[1, 2]", invalid],
      ["a scalar after a good row", json([...ok(1), 1]), invalid],
      ["a nested array after a good row", json([...ok(1), [ok(1)]]), invalid],
      ["tail missing", json(with_(ok(1), 0, { tail: undefined })), invalid],
      ["tail null", json(with_(ok(1), 0, { tail: null })), invalid],
      ["tail a number", json(with_(ok(1), 0, { tail: 1 })), invalid],
      ["tail an object", json(with_(ok(1), 0, { tail: { a: 1 } })), invalid],
      ["tail an array", json(with_(ok(1), 0, { tail: ["]"] })), invalid],
      ["second tail missing", json(with_(ok(2), 1, { tail: undefined })), invalid],
      ["last of 50 tails missing", json(with_(ok(50), 49, { tail: undefined })), invalid],
      // Refused by the table as the rows go in, under the lock: the whole statement undone.
      ["kind NULL", json(with_(ok(1), 0, { kind: null })), "23502"],
      ["ts NULL", json(with_(ok(1), 0, { ts: null })), "23502"],
      ["source missing", json(with_(ok(1), 0, { source: undefined })), "23502"],
      ["third decision NULL", json(with_(ok(3), 2, { decision: null })), "23502"],
      // A place and hash the caller names are not its to choose: ignored, the head's is used.
      [
        "seq, prev_hash and hash named",
        json(with_(ok(1), 0, { seq: 1, prev_hash: "0".repeat(64), hash: "f".repeat(64) })),
        "appended",
      ],
      ["seq past the head named", json(with_(ok(1), 0, { seq: h.seq + 1000 })), "appended"],
      ["a good batch", json(ok(3)), "appended"],
    ];
    for (const [name, rows, want] of cases) {
      results[name] = await append(sql, "acme", rows);
      expected[name] = want;
    }
  } finally {
    await sql.end();
  }
  assert.deepEqual(results, expected);
  const after = await state();
  assert.equal(after.acme.rows, before.acme.rows + 5, "only the three good batches");
  assert.equal(after.acme.head, before.acme.head + 5, "no seq taken by a refused batch");
  assert.deepEqual({ ...after, acme: null }, { ...before, acme: null });
  assert.deepEqual(await problems("acme"), []);
});

// FINDING (low, fixed): the guard `jsonb_typeof(p_rows) <> 'array' OR …` was NULL for a SQL
// NULL, so the function went on and locked the head where JSON null was refused.
Deno.test("audit_append(tenant, NULL) is refused AUDIT_ROWS_INVALID like JSON null, before any lock", async () => {
  const sql = raw(ACME_URL);
  try {
    assert.equal(await append(sql, "acme", "null"), "22023 AUDIT_ROWS_INVALID");
    assert.equal(await append(sql, "acme", null), "22023 AUDIT_ROWS_INVALID");
  } finally {
    await sql.end();
  }
});

Deno.test("a tail that does not say what its row's fields say is placed and linked (the database does not parse it) but verify() flags that row: detected, not hidden", async () => {
  const sql = raw(UNBOUND_URL);
  const h0 = await headOf("forge-co");
  try {
    const [honest, forged, framing] = batch(3, "forge");
    // Another row's tail; a tail that closes the array and starts another, with a newline.
    const other = rowTail(
      auditFields({ kind: "innocent", source: "action", decision: "allow" }, TS, (s) => s),
    );
    const rows = [
      honest,
      { ...forged, tail: other },
      { ...framing, tail: `"x"]\n${"0".repeat(64)}\n[1,"y"]` },
    ];
    assert.equal(await append(sql, "forge-co", json(rows)), "appended");
  } finally {
    await sql.end();
  }
  const found = await problems("forge-co");
  assert.deepEqual(
    found.filter((p) => /do not match its hash/.test(p)),
    [
      `row ${h0.seq + 2}: contents do not match its hash`,
      `row ${h0.seq + 3}: contents do not match its hash`,
    ],
    found.join("; "),
  );
});

Deno.test("a huge batch (10,000 rows) into one's own tenant: written whole or (one bad row) not at all; another tenant's append does not wait meanwhile", async () => {
  const sql = raw(ACME_URL);
  await using victim = await PgDatabase.open({ url: GLOBEX_URL, statementTimeoutMs: 2000 });
  const vlog = new PgAuditLog(victim, "globex", { redactor: new Redactor() });
  await vlog.head();
  try {
    const h = await headOf("acme");
    const good = batch(10_000, "own");
    const bad = good.map((r, i) => (i === 9_999 ? { ...r, kind: null } : r));
    assert.equal(await append(sql, "acme", json(bad)), "23502");
    assert.equal((await headOf("acme")).seq, h.seq);
    const big = append(sql, "acme", json(good));
    await new Promise((r) => setTimeout(r, 50));
    const v = await timed(honestAppend(vlog));
    assert.equal(v.result, "appended");
    assert.ok(v.ms < 1000, `globex waited ${v.ms} ms`);
    assert.equal(await big, "appended");
  } finally {
    await sql.end();
  }
  assert.equal((await headOf("acme")).seq, (await state()).acme.rows);
  assert.deepEqual(await problems("acme"), []);
});

// ---------------------------------------------------------------------------------------------
// Switching the tenant of a transaction

Deno.test("unbound login: audit_append inside the caller's transaction shows it nothing that set_config alone does not; autocommit leaves nothing named", async () => {
  const sql = raw(UNBOUND_URL);
  try {
    const visible = (tx: postgres.TransactionSql) =>
      tx<{ tenant_id: string; n: number }[]>`SELECT tenant_id, count(*)::int AS n
        FROM audit_events GROUP BY 1 ORDER BY 1`.then((r) => [...r]);
    // Rows the append is refused (the savepoint undoes its set_config with it), and rows it
    // writes (into open-co, the tenant the unbound login's tests may write).
    const refused = await asTenant(sql, "acme", async (tx) => {
      const answer = await appendIn(tx, "globex", json([{ seq: 0 }]));
      return { answer, rows: await visible(tx) };
    });
    const viaAppend = await asTenant(sql, "acme", async (tx) => {
      const answer = await appendIn(tx, "open-co", json(batch(1)));
      return { answer, rows: await visible(tx) };
    });
    const viaSetConfig = await asTenant(sql, "acme", async (tx) => {
      await tx`SELECT set_config('app.tenant_id', 'open-co', true)`;
      return await visible(tx);
    });
    const acmeOnly = await asTenant(sql, "acme", visible);
    assert.deepEqual(refused, { answer: "22023 AUDIT_ROWS_INVALID", rows: acmeOnly });
    assert.equal(viaAppend.answer, "appended");
    // Today the function's set_config outlives the call (the caller's transaction then names
    // globex: what set_config alone does); restoring the caller's tenant would show acme's.
    assert.ok(
      [viaSetConfig, acmeOnly].some((v) => JSON.stringify(v) === JSON.stringify(viaAppend.rows)),
      JSON.stringify(viaAppend.rows),
    );
    const [{ t }] = await sql`SELECT current_setting('app.tenant_id', true) AS t`;
    assert.ok(!t, `left on the connection: ${t}`);
  } finally {
    await sql.end();
  }
});

Deno.test("bound login: audit_append naming another tenant inside a transaction (savepoint, DO block with an exception handler) still sees and writes nothing of it", async () => {
  const before = await state();
  const sql = raw(ACME_URL);
  try {
    const g = json(batch(1));
    const seen = await asTenant(sql, "acme", async (tx) => {
      const answers = [
        await appendIn(tx, "globex", g),
        await appendIn(tx, "globex", null),
        await tx.savepoint((sp) =>
          sp.unsafe(`DO $d$ BEGIN
            PERFORM audit_append('globex', '${g}'::jsonb);
          EXCEPTION WHEN others THEN NULL; END $d$`)
        ).then(() => "done", refusal),
      ];
      // And naming globex with its own set_config, then appending for acme, then globex again.
      await tx`SELECT set_config('app.tenant_id', 'globex', true)`;
      answers.push(await appendIn(tx, "globex", g));
      const [{ other }] = await tx`SELECT
        (SELECT count(*) FROM audit_events WHERE tenant_id <> 'acme')
        + (SELECT count(*) FROM audit_heads WHERE tenant_id <> 'acme')
        + (SELECT count(*) FROM tenants WHERE id <> 'acme') AS other`;
      return { answers, other: Number(other) };
    });
    assert.deepEqual(seen, {
      answers: ["23503 TENANT_UNKNOWN", "23503 TENANT_UNKNOWN", "done", "23503 TENANT_UNKNOWN"],
      other: 0,
    });
  } finally {
    await sql.end();
  }
  assert.deepEqual(await state(), before);
});

// ---------------------------------------------------------------------------------------------
// Stalling another tenant's chain

Deno.test("bound login holding a long transaction (audit_append, audit_lock_head and INSERTs naming globex; its own head locked): globex's runtime appends without waiting", async () => {
  await using victim = await PgDatabase.open({ url: GLOBEX_URL, statementTimeoutMs: 1000 });
  const vlog = new PgAuditLog(victim, "globex", { redactor: new Redactor() });
  await vlog.head();
  const sql = raw(ACME_URL);
  try {
    const g = await headOf("globex");
    const outcome = await asTenant(sql, "globex", async (tx) => {
      await tx`SET LOCAL lock_timeout = 0`;
      await tx`SET LOCAL statement_timeout = 0`;
      const tries = [
        await appendIn(tx, "globex", json(batch(1))),
        await tx.savepoint((sp) => sp`SELECT * FROM audit_lock_head()`).then(
          (r) => `${r.length} locked`,
          refusal,
        ),
        await tx.savepoint((sp) =>
          sp`INSERT INTO audit_events ${
            sp(chain(g, 1).map((r) => ({ ...r, tenant_id: "globex" })))
          }`
        )
          .then(() => "inserted", refusal),
        await tx.savepoint((sp) => sp`SELECT 1 FROM audit_heads FOR UPDATE`).then(
          () => "locked",
          refusal,
        ),
        // Its own head, held for the rest of the transaction.
        await appendIn(tx, "acme", json(batch(1, "own"))),
      ];
      const v = await timed(honestAppend(vlog));
      return { tries, victim: v.result, fast: v.ms < 500 };
    });
    assert.deepEqual(outcome, {
      tries: ["23503 TENANT_UNKNOWN", "0 locked", "23503 TENANT_UNKNOWN", "42501", "appended"],
      victim: "appended",
      fast: true,
    });
  } finally {
    await sql.end();
  }
  assert.deepEqual(await problems("globex"), []);
});

Deno.test("unbound login holding another tenant's head through audit_append (as set_config + audit_lock_head already could): the victim's append is refused within its lock_timeout, never hangs, and recovers once released", async () => {
  await using victim = await PgDatabase.open({ url: UNBOUND_URL, statementTimeoutMs: 800 });
  const vlog = new PgAuditLog(victim, "stall-co", { redactor: new Redactor() });
  assert.equal(await honestAppend(vlog), "appended");
  const sql = raw(UNBOUND_URL);
  let release = () => {};
  const released = new Promise<void>((r) => release = r);
  let held = (_: string) => {};
  const holding = new Promise<string>((r) => held = r);
  const holder = asTenant(sql, null, async (tx) => {
    await tx`SET LOCAL statement_timeout = 0`;
    held(await appendIn(tx, "stall-co", json(batch(1, "honest"))));
    await released;
  });
  try {
    assert.equal(await holding, "appended", "the head is locked till the transaction ends");
    const v = await timed(honestAppend(vlog));
    assert.match(v.result, /^AUDIT_UNAVAILABLE: .*\((55P03|57014)\)/, v.result);
    // Refused by the lock or statement timeout, not held till the transaction ends.
    assert.ok(v.ms < ANSWER_BOUND_MS, `refused after ${v.ms} ms`);
  } finally {
    release();
    await holder.catch(() => {});
    await sql.end();
  }
  assert.equal(await honestAppend(vlog), "appended");
  assert.deepEqual(await problems("stall-co"), []);
});

// ---------------------------------------------------------------------------------------------
// Runtimes of one tenant at once

Deno.test("two runtimes (two pools, two bound logins) append to one tenant concurrently 3,000 times; every append lands once, as returned, and the chain verifies", async () => {
  const dbs = await Promise.all(RACE_URLS.map((url) => PgDatabase.open({ url, max: 4 })));
  try {
    const logs = dbs.map((db) => new PgAuditLog(db, "race-co", { redactor: new Redactor() }));
    const PER_WORKER = 250;
    const returned: AuditRow[] = [];
    let events = 0;
    const worker = async (log: PgAuditLog, w: number) => {
      for (let i = 0; i < PER_WORKER; i++) {
        const batch = Array.from({ length: 1 + ((i + w) % 3) }, () => HONEST);
        events += batch.length;
        returned.push(...await log.append(batch));
      }
    };
    const t0 = performance.now();
    await Promise.all(
      logs.flatMap((log, l) => [0, 1, 2, 3, 4, 5].map((w) => worker(log, l * 6 + w))),
    );
    const ms = performance.now() - t0;
    const stored = await owner.transaction((tx) =>
      tx<{ seq: string; hash: string }[]>`SELECT seq, hash FROM audit_events
        WHERE tenant_id = 'race-co' ORDER BY seq`
    );
    assert.equal(stored.length, events, `${events} events in ${ms | 0} ms`);
    assert.equal(returned.length, events);
    assert.equal(new Set(returned.map((r) => r.seq)).size, events, "no seq returned twice");
    const bySeq = new Map(stored.map((r) => [Number(r.seq), r.hash]));
    assert.deepEqual(returned.filter((r) => bySeq.get(r.seq) !== r.hash).map((r) => r.seq), []);
    assert.ok(events >= 3_000);
  } finally {
    for (const db of dbs) await db[Symbol.asyncDispose]();
  }
  assert.deepEqual(await problems("race-co"), []);
});

Deno.test("a raw audit_append of another runtime between two of this one's appends: each lands at the head it finds, and the chain verifies", async () => {
  await using db = await PgDatabase.open({ url: RACE_URLS[0] });
  const log = new PgAuditLog(db, "race-co", { redactor: new Redactor() });
  await log.append([HONEST]);
  const sql = raw(RACE_URLS[1]);
  try {
    for (let i = 0; i < 5; i++) {
      assert.equal(
        await append(sql, "race-co", json(batch(1, "honest"))),
        "appended",
      );
      const [row] = await log.append([HONEST]);
      assert.equal(row.seq, (await headOf("race-co")).seq);
    }
  } finally {
    await sql.end();
  }
  assert.deepEqual(await problems("race-co"), []);
});

// ---------------------------------------------------------------------------------------------
// Live sessions across tenants and runtimes

Deno.test("live_update / live_end reach only the transaction's tenant's row of the runtime's own secret; a bound login naming another tenant reaches nothing", async () => {
  await using dbA = await PgDatabase.open({ url: UNBOUND_URL });
  await using dbB = await PgDatabase.open({ url: UNBOUND_URL });
  const secretA = crypto.randomUUID();
  const a = new PgLiveSessions(dbA, { name: "rt-a", secret: secretA });
  const b = new PgLiveSessions(dbB, { name: "rt-b", secret: crypto.randomUUID() });
  const open = (id: string) => ({
    id,
    agent: "ada",
    isolation: "netns",
    startedAt: new Date().toISOString(),
  });
  await a.open("live-a", open("s1"));
  await a.open("live-b", open("s1"));
  await b.open("live-a", open("s2"));
  const upd = { origin: "https://evil.test", actionsUsed: 99, tainted: true };
  const liveB = async () => [
    ...await owner.transaction((tx) =>
      tx`SELECT id, runtime, origin, actions_used, tainted FROM live_sessions
        WHERE tenant_id = 'live-b' ORDER BY id`
    ),
  ];
  const liveBBefore = await liveB();

  // Another runtime's secret: nothing, in either tenant.
  assert.equal(await b.update("live-a", "s1", upd), false);
  assert.equal(await b.end("live-a", "s1"), false);
  assert.equal(await a.update("live-a", "s2", upd), false);
  assert.equal(await a.end("live-a", "s2"), false);

  // The runtime's own secret, for live-a: live-b's row of the same id stays.
  assert.equal(await a.update("live-a", "s1", { ...upd, origin: "https://a.test" }), true);

  // Raw: no tenant, another tenant under a bound login, NULL/empty secrets.
  const bound = raw(LIVE_A_URL);
  const unbound = raw(UNBOUND_URL);
  try {
    const calls = [
      `live_update('${secretA}', 's1', 'https://evil.test', 1, true)`,
      `live_end('${secretA}', 's1')`,
    ];
    for (const call of calls) {
      const [none] = await unbound.unsafe(`SELECT ${call} AS ok`);
      assert.equal(none.ok, false, `no tenant: ${call}`);
      const [other] = await asTenant(bound, "live-b", (tx) => tx.unsafe(`SELECT ${call} AS ok`));
      assert.equal(other.ok, false, `bound to live-a, naming live-b: ${call}`);
    }
    const kill = await asTenant(bound, "live-b", (tx) => tx`SELECT live_kill('s1') AS ok`).then(
      ([r]) => String(r.ok),
      refusal,
    );
    assert.match(kill, /^(false|42501 TENANT_UNSET)$/);
    for (const secret of [null, "", "%"]) {
      const [r] = await asTenant(
        unbound,
        "live-b",
        (tx) =>
          tx`SELECT live_update(${secret}, 's1', 'x', 1, true) AS u, live_end(${secret}, 's1') AS e`,
      );
      assert.deepEqual({ u: r.u, e: r.e }, { u: false, e: false }, String(secret));
    }
    await assert.rejects(unbound`SELECT runtime_key FROM live_sessions`, /permission denied/);
  } finally {
    await bound.end();
    await unbound.end();
  }
  assert.deepEqual(await liveB(), liveBBefore);
  assert.equal(await a.end("live-a", "s1"), true);
  assert.deepEqual(await liveB(), liveBBefore, "ending live-a's s1 leaves live-b's");
  assert.equal((await b.list("live-a")).map((s) => s.id).join(), "s2");
});

// FINDING (low): live_heartbeat, live_sweep and live_killed find rows by the secret alone, not
// by app_tenant(): a login bound to live-a that holds a runtime secret once used for live-b
// (a data dir reused across tenants) still refreshes, lists and removes live-b's rows.
Deno.test("a login bound to live-a reaches no live-b row through live_heartbeat, live_killed or live_sweep, even with a secret used there", async () => {
  const secret = crypto.randomUUID();
  await using db = await PgDatabase.open({ url: UNBOUND_URL });
  const rt = new PgLiveSessions(db, { name: "rt-reused", secret });
  await rt.open("live-b", {
    id: "old-b",
    agent: null,
    isolation: "netns",
    startedAt: new Date().toISOString(),
  });
  await rt.kill("live-b", "old-b");
  const row = () =>
    owner.transaction((tx) =>
      tx`SELECT id, heartbeat_at FROM live_sessions WHERE tenant_id = 'live-b' AND id = 'old-b'`
    ).then((r) => [...r]);
  const before = await row();
  await new Promise((r) => setTimeout(r, 20));
  const bound = raw(LIVE_A_URL);
  const reached: Record<string, unknown> = {};
  try {
    for (const named of [null, "live-a", "live-b"]) {
      const [r] = await asTenant(bound, named, (tx) =>
        tx`SELECT live_heartbeat(${secret}) AS beat,
          (SELECT count(*)::int FROM live_killed(${secret})) AS killed`);
      reached[`heartbeat as ${named}`] = r.beat;
      reached[`killed as ${named}`] = r.killed;
    }
    const [s] = await asTenant(bound, "live-a", (tx) => tx`SELECT live_sweep(${secret}) AS n`);
    reached["sweep as live-a"] = s.n;
  } finally {
    await bound.end();
  }
  assert.deepEqual(reached, {
    "heartbeat as null": 0,
    "killed as null": 0,
    "heartbeat as live-a": 0,
    "killed as live-a": 0,
    "heartbeat as live-b": 0,
    "killed as live-b": 0,
    "sweep as live-a": 0,
  });
  assert.deepEqual(await row(), before, "live-b's row unchanged");
});

// ---------------------------------------------------------------------------------------------

Deno.test("globex holds only its own runtime's rows, and every tenant's chain verifies", async () => {
  const kinds = await owner.transaction((tx) =>
    tx<{ kind: string }[]>`SELECT DISTINCT kind FROM audit_events WHERE tenant_id = 'globex'`
  );
  assert.deepEqual(kinds.map((k) => k.kind), ["honest"]);
  for (const t of TENANTS.filter((t) => t !== "forge-co")) {
    assert.deepEqual(await problems(t), [], t);
  }
});

Deno.test(clusterTeardown("pg append attack tests", pg, owner));
