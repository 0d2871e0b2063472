/**
 * A second attacker's pass over `audit_append(p_tenant, p_rows)` as the database now chains
 * the rows itself (pg_migration_audit_chain.ts): what pg_append_attack_test.ts does not try.
 *
 * - Page-controlled text in every field through `PgAuditLog.append` (the DB must hash what
 *   `rowHash()` hashes, or the runtime denies), and through `PgAuditSink` (one row's text must
 *   not take the other rows of its batch down).
 * - Rows whose stored fields differ from what their tail says (duplicate keys, numbers,
 *   nested objects, escapes, normalization): verify() must flag every one of them.
 * - Session settings a compromised runtime may change on its own connection (SET ROLE,
 *   client_encoding, standard_conforming_strings, search_path, row_security, timeouts 0).
 * - Several calls in one statement, refused batches and rolled-back callers (no seq taken),
 *   seq at 2^53 and at bigint max, batch sizes 0/1/500, a timing oracle on a busy victim.
 *
 * Every test asserts the SECURE behaviour: it passes when the attack fails. A test marked
 * `// FINDING` failed on the code it was written against; each says what fixed it.
 */
import assert from "node:assert/strict";
import { Redactor } from "../redact/mod.ts";
import { OmotaiError } from "../errors.ts";
import { PgAuditLog } from "./pg_audit_log.ts";
import { PgAuditSink } from "./pg_audit_sink.ts";
import {
  AUDIT_FIELDS,
  type AuditEvent,
  type AuditFields,
  auditFields,
  type AuditRow,
  rowTail,
} from "./audit_row.ts";
import { PgDatabase } from "./pg_database.ts";
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

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();
/** A runtime login of its own, bound to `tenant` when one is given (docs/deploy.md). */
const login = (name: string, tenant?: string) => attackLogin(pg, owner, name, tenant);
/** The problems `verify()` finds in `tenant`'s chain (none: it verifies). */
const problems = (tenant: string) => problemsOf(owner, tenant);
const TENANTS = [
  "c-acme",
  "c-globex",
  "c-text",
  "c-nul",
  "c-sink",
  "c-forge",
  "c-multi",
  "c-refuse",
  "c-big",
  "c-max",
  "c-batch",
  "c-types",
  "c-enc",
];
for (const t of TENANTS) await addTenant(owner, t);

const ACME_URL = await login("ca_acme", "c-acme");
const GLOBEX_URL = await login("ca_globex", "c-globex");
const ENC_URL = await login("ca_enc", "c-enc");
/** The unbound login: names its tenant with app.tenant_id. */
const UNBOUND_URL = pg.appUrl;

const HONEST: AuditEvent = { kind: "honest", source: "action", decision: "allow" };

{
  await using db = await PgDatabase.open({ url: GLOBEX_URL });
  await new PgAuditLog(db, "c-globex", { redactor: new Redactor() }).append([HONEST, HONEST]);
}

const TS = new Date().toISOString();

/** `n` rows as `audit_append` takes them. */
const batch = (n: number, kind = "forged") => batchAt(n, kind, TS);
async function headOf(tenant: string): Promise<{ seq: string; hash: string }> {
  const [h] = await owner.transaction((tx) =>
    tx<{ seq: string; hash: string }[]>`SELECT head_seq AS seq, head_hash AS hash
      FROM audit_heads WHERE tenant_id = ${tenant}`
  );
  return h;
}

async function state(): Promise<Record<string, { rows: number; head: string }>> {
  const rows = await owner.transaction((tx) =>
    tx<{ id: string; rows: number; head: string }[]>`SELECT t.id,
      (SELECT count(*)::int FROM audit_events e WHERE e.tenant_id = t.id) AS rows,
      (SELECT head_seq FROM audit_heads h WHERE h.tenant_id = t.id) AS head
      FROM tenants t ORDER BY t.id`
  );
  return Object.fromEntries(rows.map((r) => [r.id, { rows: r.rows, head: r.head }]));
}

/** The tenant's stored rows, as the owner reads them. */
async function stored(tenant: string, afterSeq = 0): Promise<AuditRow[]> {
  const rows = await owner.transaction((tx) =>
    tx<Record<string, unknown>[]>`SELECT seq, ts, session, agent, kind, source, origin, method,
      decision, reason, module, rule, prev_hash, hash FROM audit_events
      WHERE tenant_id = ${tenant} AND seq > ${afterSeq} ORDER BY seq`
  );
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }) as unknown as AuditRow);
}

/** PgAuditLog.append's outcome: "appended" or the error's code. */
function outcome(p: Promise<AuditRow[]>): Promise<string> {
  return p.then(
    () => "appended",
    (err: Error) => err instanceof OmotaiError ? `${err.code}: ${err.message}` : err.message,
  );
}

const FIELDS = [
  "session",
  "agent",
  "kind",
  "origin",
  "method",
  "reason",
  "module",
  "rule",
] as const;

/** The AuditFields columns of a stored or returned row. */
function columns(r: AuditRow): Rec {
  return Object.fromEntries([...AUDIT_FIELDS, "prev_hash", "hash"].map((f) => [f, r[f as "seq"]]));
}

// ---------------------------------------------------------------------------------------------
// Page-controlled text through PgAuditLog.append

/** Text a page can put in a row (the form method is read from the page as is, any string). */
const HOSTILE: [string, string][] = [
  ["quotes and backslashes", 'a"b\\c\\\\"'],
  ["a tail-framing string", '","x"]\n' + "0".repeat(64) + '\n[1,"'],
  ["a literal \\u0000", "\\u0000"],
  ["a literal \\ud800", "\\ud800\\udc00"],
  ["noncharacters", "\uFFFE\uFFFF\uFDD0"],
  ["the last code point", "\u{10FFFF}"],
  ["an astral emoji", "\u{1F600}\u{1F3F3}\uFE0F\u200D\u{1F308}"],
  ["NFC", "\u00e9\u00c5\u1E9B\u0323"],
  ["NFD of the same", "e\u0301A\u030A\u017F\u0323\u0307"],
  ["bidi and BOM", "\u202Eevil\u202C\uFEFF\u200B"],
  ["C1 controls and NEL", "\u0080\u0085\u009F"],
  ["C0 controls", "\u0001\u0007\b\t\n\v\f\r\u001b\u001f\u007f"],
  ["line and paragraph separators", "\u2028\u2029"],
  ["JSON-looking", '{"kind":"allow","tail":"x"}'],
  ["an array-looking", '[1,2,"3"]'],
  ["null as text", "null"],
  ["a number as text", "5"],
  ["true as text", "true"],
  ["the empty string", ""],
  ["a space", " "],
  ["150 kB of escapes", '\u0001"\\'.repeat(50_000)],
];

Deno.test("PgAuditLog.append: hostile but valid text in every field is stored as sent, hashed by the database as rowHash() does, returned as stored, and verifies", async () => {
  await using db = await PgDatabase.open({ url: UNBOUND_URL });
  const log = new PgAuditLog(db, "c-text", { redactor: new Redactor() });
  const results: Record<string, string> = {};
  const returned: AuditRow[] = [];
  for (const [name, text] of HOSTILE) {
    const event: AuditEvent = {
      ...HONEST,
      ...Object.fromEntries(FIELDS.map((f) => [f, text])),
    } as AuditEvent;
    try {
      returned.push(...await log.append([event, HONEST]));
      results[name] = "appended";
    } catch (err) {
      results[name] = `${(err as OmotaiError).code}: ${(err as Error).message}`;
    }
  }
  assert.deepEqual(results, Object.fromEntries(HOSTILE.map(([n]) => [n, "appended"])));
  const rows = await stored("c-text");
  assert.deepEqual(rows.map(columns), returned.map(columns), "returned = stored, byte for byte");
  assert.deepEqual(await problems("c-text"), []);
});

// FINDING (low-medium, pre-existing; fixed: auditFields() makes every field storable, and
// element_info.ts reads the reflected formMethod/formAction): a NUL or a lone surrogate in any free-text field makes
// PgAuditLog.append refuse the whole batch (PostgreSQL's jsonb holds neither \u0000 nor an
// unpaired \uD800-\uDFFF escape: 22P05 / 22P02, before any lock, nothing written). `origin` is
// safe (cut to an ASCII origin), every other field breaks. The form method is page-controlled:
// element_info.ts reads a submit button's `formmethod` attribute as is (setAttribute takes
// any string; CDP carries \u0000 and lone surrogates as \u escapes) and audit_rows.ts writes
// it to `method`. (The embedded SQLite log keeps such a row but stores it cut at the NUL or
// with U+FFFD, so its own verify() then flags the row as tampered: same root cause.) See the
// PgAuditSink test below for what this does to the other rows of the batch.
Deno.test("PgAuditLog.append: a NUL or a lone surrogate in any field (page text) is still written and the chain verifies", async () => {
  await using db = await PgDatabase.open({ url: UNBOUND_URL });
  const log = new PgAuditLog(db, "c-nul", { redactor: new Redactor() });
  const texts: [string, string][] = [
    ["NUL", "POST\u0000"],
    ["lone high surrogate", "POST\uD800"],
    ["lone low surrogate", "\uDC00POST"],
    ["reversed pair", "\uDC00\uD800"],
    ["cut emoji", "x\uD83D"],
  ];
  const before = await headOf("c-nul");
  const broken: string[] = [];
  for (const field of FIELDS) {
    for (const [name, text] of texts) {
      const r = await outcome(log.append([{ ...HONEST, [field]: text } as AuditEvent]));
      if (r !== "appended") broken.push(`${field} with ${name}: ${r}`);
    }
  }
  // Whatever broke took no place in the chain.
  const after = await headOf("c-nul");
  assert.equal(
    Number(after.seq) - Number(before.seq),
    FIELDS.length * texts.length - broken.length,
    "a refused append moved the head",
  );
  assert.deepEqual(await problems("c-nul"), []);
  assert.deepEqual(broken, [], `refused:\n${broken.join("\n")}`);
});

// FINDING (medium, pre-existing, PostgreSQL store only; fixed: rows are made storable, and a
// batch the store refuses for a row's values is split until the refusal is that row's alone,
// pg_audit_sink_test.ts): PgAuditSink writes its queue in
// batches of up to 500 rows, one audit_append each; one row a page controls (a form method
// with a NUL or a lone surrogate) makes the batch fail, so every other row queued with it
// (other sessions', other agents' requests and actions waiting on appendSoon) is refused
// AUDIT_UNAVAILABLE (their actions denied), and the sink turns unhealthy: `append()` (the
// session's own lifecycle rows) throws until a batch commits again. A page that submits such a
// form in a loop denies every agent on the runtime. Fix: make the row storable before it is
// sent (auditFields(): replace U+0000 and unpaired surrogates, e.g. by U+FFFD or a visible
// escape, before redaction and hashing, for both stores alike), or have the sink retry a
// failed batch row by row so one row's refusal stays its own.
Deno.test("PgAuditSink: one page-controlled row in a batch does not make the database refuse the other sessions' rows queued with it", async () => {
  await using db = await PgDatabase.open({ url: UNBOUND_URL, max: 1 });
  const sink = new PgAuditSink(new PgAuditLog(db, "c-sink", { redactor: new Redactor() }), {
    probeMs: 0,
  });
  try {
    // The same turn of the event loop: one batch.
    const other = sink.appendSoon({ ...HONEST, session: "s-other", agent: "bob" });
    const page = sink.appendSoon({
      kind: "click",
      source: "action",
      session: "s-page",
      agent: "ada",
      origin: "https://evil.test",
      method: "POST\u0000",
      decision: "deny",
      reason: "POLICY_DENY",
    });
    const [o, p] = await Promise.allSettled([other, page]);
    const settled = (s: PromiseSettledResult<AuditRow>) =>
      s.status === "fulfilled" ? "kept" : `${(s.reason as OmotaiError).code}`;
    assert.deepEqual(
      { other: settled(o), healthy: sink.healthy },
      { other: "kept", healthy: true },
      `the page's own row: ${settled(p)}`,
    );
  } finally {
    await sink.flush();
  }
  assert.deepEqual(await problems("c-sink"), []);
});

Deno.test("PgAuditLog.append: fields of the wrong type (a caller's bug, not page text) never make a row that hides what it says: verify flags every row whose stored text differs from what was hashed", async () => {
  await using db = await PgDatabase.open({ url: UNBOUND_URL });
  const log = new PgAuditLog(db, "c-types", { redactor: new Redactor() });
  const odd: Record<string, Rec> = {
    "kind a number": { kind: 5 },
    "source a number": { source: 7 },
    "decision a boolean": { decision: true },
    "reason an object": { reason: { a: 1, b: "x" } },
    "rule an array": { rule: ["a", 1] },
    "method a big float": { method: 1e21 },
  };
  const results: Record<string, string> = {};
  for (const [name, patch] of Object.entries(odd)) {
    const before = Number((await headOf("c-types")).seq);
    const r = await outcome(log.append([{ ...HONEST, ...patch } as unknown as AuditEvent]));
    if (r !== "appended") {
      results[name] = "refused";
      continue;
    }
    const [row] = await stored("c-types", before);
    const p = await problems("c-types");
    const flagged = p.includes(`row ${row.seq}: contents do not match its hash`);
    // Either the stored row is what was hashed (verify passes it), or verify says so.
    const { hash: _h, ...rest } = row;
    // What the runtime makes of the value (its text) is what must be stored and hashed.
    const consistent = rowTail(rest as AuditFields) ===
      rowTail(auditFields({ ...HONEST, ...patch } as unknown as AuditEvent, row.ts, (s) => s));
    results[name] = flagged ? "flagged by verify" : consistent ? "stored as hashed" : "HIDDEN";
  }
  assert.ok(Object.values(results).every((r) => r !== "HIDDEN"), JSON.stringify(results));
});

// ---------------------------------------------------------------------------------------------
// Rows whose stored fields differ from what their tail says

Deno.test("raw audit_append (own tenant): duplicate keys, numbers, booleans, nested objects, escapes, normalization and re-framed tails: every row whose stored fields differ from what its hash covers is flagged by verify(), and no other", async () => {
  const sql = raw(UNBOUND_URL);
  const h0 = Number((await headOf("c-forge")).seq);
  const base = auditFields({ kind: "k", source: "action", decision: "allow" }, TS, (s) => s);
  const tailOf = (patch: Rec) => rowTail({ ...base, ...patch } as AuditFields);
  const obj = (patch: Rec, tail: string) => json({ ...base, ...patch, tail });
  // Each row as JSON text (so duplicate keys survive to the server), and what its tail says.
  const cases: [string, string][] = [
    ["honest", obj({}, tailOf({}))],
    // jsonb keeps the last of duplicate keys; the tail says the first.
    [
      "duplicate kind, tail of the first",
      obj({}, tailOf({ kind: "allowed" })).replace(
        /^\{/,
        '{"kind":"allowed",',
      ).replace(/"kind":"k"/, '"kind":"denied"'),
    ],
    [
      "duplicate tail, first says truth",
      obj({}, "garbage").replace(
        /^\{/,
        `{"tail":${json(tailOf({}))},`,
      ),
    ],
    ["kind a number, tail hashes 5", obj({ kind: 5 }, tailOf({ kind: 5 }))],
    ['kind a number, tail hashes "5"', obj({ kind: 5 }, tailOf({ kind: "5" }))],
    ["decision true", obj({ decision: true }, tailOf({ decision: true }))],
    ["reason nested object", obj({ reason: { a: 1 } }, tailOf({ reason: { a: 1 } }))],
    [
      "reason nested object, tail of its jsonb text",
      obj({ reason: { a: 1 } }, tailOf({ reason: '{"a": 1}' })),
    ],
    ['reason JSON null vs tail "null"', obj({ reason: null }, tailOf({ reason: "null" }))],
    ["reason missing, tail null", json({ ...base, reason: undefined, tail: tailOf({}) })],
    ["NFD stored, NFC hashed", obj({ reason: "e\u0301" }, tailOf({ reason: "\u00e9" }))],
    [
      "escape in the tail text",
      obj({ reason: "\u00e9" }, tailOf({ reason: "\u00e9" }).replace("\u00e9", "\\u00e9")),
    ],
    ["tail with whitespace", obj({}, tailOf({}).replace(/,/g, ", "))],
    ["tail missing its bracket", obj({}, tailOf({}).slice(0, -1))],
    ["tail with trailing garbage", obj({}, tailOf({}) + '],["x"')],
    ["another row's tail", obj({ kind: "deny-me" }, tailOf({ kind: "allow-me" }))],
    [
      "tail 2 MB",
      obj({ reason: "r".repeat(2_000_000) }, tailOf({ reason: "r".repeat(2_000_000) })),
    ],
    ["honest again", obj({}, tailOf({}))],
  ];
  try {
    const answer = await append(sql, "c-forge", `[${cases.map(([, r]) => r).join(",")}]`);
    assert.equal(answer, "appended");
  } finally {
    await sql.end();
  }
  const rows = await stored("c-forge", h0);
  assert.equal(rows.length, cases.length);
  // What each row's hash covers, read back from what the database hashed: the stored hash
  // recomputed over the tail sent must be the stored hash (the DB hashed the tail), and the
  // row verifies exactly when the stored fields make that tail.
  const sentTails = cases.map(([, r]) => (JSON.parse(r) as { tail: string }).tail);
  const mismatched = rows.filter((r, i) => {
    const { hash: _h, prev_hash: _p, seq: _s, ...fields } = r;
    return rowTail(fields as AuditFields) !== sentTails[i];
  }).map((r) => `row ${r.seq}: contents do not match its hash`);
  const flagged = (await problems("c-forge")).filter((p) => /do not match its hash/.test(p));
  assert.deepEqual(flagged, mismatched);
  // And every forged case is among them (the honest ones and the consistent ones are not).
  const flaggedNames = cases.filter((_, i) =>
    flagged.includes(`row ${h0 + i + 1}: contents do not match its hash`)
  )
    .map(([n]) => n);
  assert.deepEqual(flaggedNames, [
    "duplicate kind, tail of the first",
    "duplicate tail, first says truth",
    "kind a number, tail hashes 5",
    "decision true",
    "reason nested object",
    'reason JSON null vs tail "null"',
    "NFD stored, NFC hashed",
    "escape in the tail text",
    "tail with whitespace",
    "tail missing its bracket",
    "tail with trailing garbage",
    "another row's tail",
  ]);
});

// ---------------------------------------------------------------------------------------------
// Session settings of a compromised runtime's own connection

/** Session settings a compromised runtime may change on its own connection. */
const SETTINGS = [
  "SET ROLE omotai_runtime",
  "SET client_encoding = 'LATIN1'",
  "SET standard_conforming_strings = off",
  "SET search_path = pg_temp, public, pg_catalog",
  "SET app.tenant_id = 'c-globex'",
  "SET statement_timeout = 0",
  "SET lock_timeout = 0",
  "SET idle_in_transaction_session_timeout = 0",
  "SET default_transaction_isolation = 'serializable'",
  "SET plpgsql.variable_conflict = 'error'",
  "SET DateStyle = 'SQL, DMY'",
  "SET extra_float_digits = -15",
  "SET bytea_output = 'escape'",
  "SET transform_null_equals = on",
  "SET array_nulls = off",
];

Deno.test("bound login with changed session settings (SET ROLE omotai_runtime, client_encoding LATIN1, standard_conforming_strings off, search_path, session app.tenant_id, timeouts 0): audit_append writes nothing into another tenant, and its own appends still verify", async () => {
  const before = await state();
  const sql = raw(ENC_URL);
  const answers: Record<string, string> = {};
  try {
    for (const s of SETTINGS) {
      answers[s] = await sql.unsafe(s).then(() => "set", refusal);
    }
    answers["session_replication_role"] = await sql.unsafe(
      "SET session_replication_role = replica",
    ).then(() => "set", refusal);
    answers["globex"] = await append(sql, "c-globex", json(batch(1)));
    answers["globex in its tx"] = await asTenant(
      sql,
      "c-globex",
      (tx) => appendIn(tx, "c-globex", json(batch(1))),
    );
    // Own tenant, non-ASCII text sent as UTF-8 bytes the server reads as LATIN1.
    const fields = auditFields({ ...HONEST, reason: "café ☕ \u{1F600}" }, TS, (s) => s);
    answers["own"] = await append(sql, "c-enc", json([{ ...fields, tail: rowTail(fields) }]));
    answers["own, row_security off"] = await sql.begin(async (tx) => {
      await tx`SET LOCAL row_security = off`;
      return await appendIn(tx, "c-enc", json(batch(1)));
    }).then((r) => r, refusal);
  } finally {
    await sql.end();
  }
  assert.deepEqual(answers, {
    ...Object.fromEntries(
      SETTINGS.map((s) => [s, "set"]),
    ),
    session_replication_role: "42501",
    globex: "23503 TENANT_UNKNOWN",
    "globex in its tx": "23503 TENANT_UNKNOWN",
    own: "appended",
    "own, row_security off": "42501",
  });
  const after = await state();
  assert.deepEqual({ ...after, "c-enc": null }, { ...before, "c-enc": null });
  assert.equal(after["c-enc"].rows, before["c-enc"].rows + 1);
  assert.deepEqual(await problems("c-enc"), []);
  assert.deepEqual(await problems("c-globex"), []);
  // And the honest runtime of that login, on a fresh connection, is unaffected.
  await using db = await PgDatabase.open({ url: ENC_URL });
  const log = new PgAuditLog(db, "c-enc", { redactor: new Redactor() });
  await log.append([{ ...HONEST, reason: "café ☕" }]);
  assert.deepEqual((await log.verify()).problems, []);
});

Deno.test("a bound login cannot hold another tenant's tenant or head row through a foreign key, a share lock or a temp table (the FK and link checks audit_append's rows take)", async () => {
  const sql = raw(ACME_URL);
  const tries: Record<string, string> = {};
  try {
    const stmts = {
      "temp FK to tenants": "CREATE TEMP TABLE t (x text REFERENCES public.tenants(id))",
      "temp FK to heads": "CREATE TEMP TABLE t (x text REFERENCES public.audit_heads(tenant_id))",
      "tenants FOR KEY SHARE": "SELECT 1 FROM tenants FOR KEY SHARE",
      "heads FOR KEY SHARE": "SELECT 1 FROM audit_heads FOR KEY SHARE",
      "events FOR KEY SHARE": "SELECT 1 FROM audit_events FOR KEY SHARE",
      "LOCK audit_heads SHARE": "LOCK TABLE audit_heads IN SHARE MODE",
      "LOCK audit_events SHARE": "LOCK TABLE audit_events IN SHARE MODE",
      "LOCK tenants SHARE": "LOCK TABLE tenants IN SHARE MODE",
    };
    for (const [name, stmt] of Object.entries(stmts)) {
      tries[name] = await asTenant(sql, "c-acme", (tx) => tx.unsafe(stmt)).then(
        () => "done",
        refusal,
      );
    }
  } finally {
    await sql.end();
  }
  assert.deepEqual(tries, {
    "temp FK to tenants": "42501",
    "temp FK to heads": "42501",
    "tenants FOR KEY SHARE": "42501",
    "heads FOR KEY SHARE": "42501",
    "events FOR KEY SHARE": "42501",
    "LOCK audit_heads SHARE": "42501",
    "LOCK audit_events SHARE": "42501",
    "LOCK tenants SHARE": "42501",
  });
});

Deno.test("timing: while the victim's head is locked by its own runtime, a bound login's audit_append naming it answers TENANT_UNKNOWN at once (no wait tells it the tenant exists or is busy)", async () => {
  const victim = raw(GLOBEX_URL);
  const sql = raw(ACME_URL);
  let release = () => {};
  const released = new Promise<void>((r) => release = r);
  let held = (_: string) => {};
  const holding = new Promise<string>((r) => held = r);
  const holder = asTenant(victim, "c-globex", async (tx) => {
    held(await appendIn(tx, "c-globex", json(batch(1, "honest"))));
    await released;
  });
  try {
    assert.equal(await holding, "appended");
    await sql.unsafe("SET lock_timeout = 0");
    await sql.unsafe("SET statement_timeout = 3000");
    const busy = await timed(append(sql, "c-globex", json(batch(1))));
    const none = await timed(append(sql, "c-nosuch", json(batch(1))));
    const busyTx = await timed(
      asTenant(sql, "c-globex", (tx) => appendIn(tx, "c-globex", json(batch(1)))),
    );
    assert.deepEqual(
      [busy.result, none.result, busyTx.result],
      ["23503 TENANT_UNKNOWN", "23503 TENANT_UNKNOWN", "23503 TENANT_UNKNOWN"],
    );
    // Not a wait for the lock: that would have ended at the statement timeout (57014).
  } finally {
    release();
    await holder.catch(() => {});
    await victim.end();
    await sql.end();
  }
  assert.deepEqual(await problems("c-globex"), []);
});

// ---------------------------------------------------------------------------------------------
// Several calls in one statement

Deno.test("several audit_append calls in one statement: each chains from the head the one before left (same tenant), and a refused call (another tenant) undoes the whole statement", async () => {
  const sql = raw(ACME_URL);
  const before = await state();
  let answers: Record<string, string> = {};
  try {
    const three = await sql<{ seq: string }[]>`
      SELECT (audit_append('c-acme', ${json(batch(2, "own"))}::text::jsonb)).seq
      FROM generate_series(1, 3)`.then((r) => `${r.length} placed`, refusal);
    const mixed = await sql`
      SELECT * FROM audit_append('c-acme', ${json(batch(1, "own"))}::text::jsonb)
      UNION ALL SELECT * FROM audit_append('c-globex', ${json(batch(1))}::text::jsonb)`.then(
      (r) => `${r.length} placed`,
      refusal,
    );
    const lateral = await sql`
      SELECT a.seq FROM (VALUES ('c-acme'), ('c-acme'), ('c-globex')) v(t),
        LATERAL audit_append(v.t, ${json(batch(1, "own"))}::text::jsonb) a`.then(
      (r) => `${r.length} placed`,
      refusal,
    );
    answers = { three, mixed, lateral };
  } finally {
    await sql.end();
  }
  assert.deepEqual(answers, {
    three: "6 placed",
    mixed: "23503 TENANT_UNKNOWN",
    lateral: "23503 TENANT_UNKNOWN",
  });
  const after = await state();
  assert.equal(after["c-acme"].rows, before["c-acme"].rows + 6);
  assert.deepEqual({ ...after, "c-acme": null }, { ...before, "c-acme": null });
  assert.deepEqual(await problems("c-acme"), []);
});

// ---------------------------------------------------------------------------------------------
// Refused batches, rolled-back callers

Deno.test("a refused or rolled-back append takes no seq and leaves the head where it was: NUL, lone surrogate, NULL column in row 500, cancelled by statement_timeout mid-batch, caller ROLLBACK, savepoint rollback; the next append lands at head + 1", async () => {
  const sql = raw(UNBOUND_URL);
  const results: Record<string, string> = {};
  const h0 = await headOf("c-refuse");
  try {
    const good = batch(1, "own");
    const withReason = (reason: string) => json(good.map((r) => ({ ...r, reason })));
    results.nul = await append(sql, "c-refuse", withReason("a\u0000b"));
    results.surrogate = await append(sql, "c-refuse", withReason("a\uD800b"));
    results.nul_in_tail_only = await append(
      sql,
      "c-refuse",
      json(good.map((r) => ({ ...r, tail: `${r.tail}\u0000` }))),
    );
    results.null_at_500 = await append(
      sql,
      "c-refuse",
      json(batch(500, "own").map((r, i) => (i === 499 ? { ...r, decision: null } : r))),
    );
    results.cancelled = await sql.begin(async (tx) => {
      await tx`SET LOCAL statement_timeout = 20`;
      return await appendIn(tx, "c-refuse", json(batch(20_000, "own")));
    }).then((r) => r, refusal);
    // Appended inside the caller's transaction, which then rolls back.
    results.rolled_back = await sql.begin(async (tx) => {
      const a = await appendIn(tx, "c-refuse", json(batch(3, "own")));
      throw new Error(`rollback after ${a}`);
    }).then(() => "committed", (e: Error) => e.message);
    results.savepoint = await asTenant(sql, "c-refuse", async (tx) => {
      await tx.savepoint(async (sp) => {
        await append(sp, "c-refuse", json(batch(2, "own")));
        throw new Error("undo");
      }).catch(() => {});
      const [h] = await tx`SELECT head_seq FROM audit_heads WHERE tenant_id = 'c-refuse'`;
      return `head ${h.head_seq}`;
    });
  } finally {
    await sql.end();
  }
  assert.deepEqual(results, {
    nul: "22P05",
    surrogate: "22P02",
    nul_in_tail_only: "22P05",
    null_at_500: "23502",
    cancelled: "57014",
    rolled_back: "rollback after appended",
    savepoint: `head ${h0.seq}`,
  });
  assert.deepEqual(await headOf("c-refuse"), h0);
  // The writer's one connection is not wedged by its refusals, and no seq was taken.
  await using db = await PgDatabase.open({ url: UNBOUND_URL, max: 1 });
  const log = new PgAuditLog(db, "c-refuse", { redactor: new Redactor() });
  // Through the runtime a NUL is made storable (U+FFFD) before it is sent: the row is kept.
  const [nul] = await log.append([{ ...HONEST, method: "\u0000" }]);
  assert.equal(nul.method, "\ufffd");
  const [row] = await log.append([HONEST]);
  assert.equal(nul.seq, Number(h0.seq) + 1);
  assert.equal(nul.prev_hash, h0.hash);
  assert.equal(row.seq, Number(h0.seq) + 2);
  assert.equal(row.prev_hash, nul.hash);
  assert.deepEqual(await problems("c-refuse"), []);
});

// ---------------------------------------------------------------------------------------------
// seq at the edges

async function setHead(tenant: string, seq: bigint): Promise<void> {
  await owner.transaction((tx) =>
    tx`UPDATE audit_heads SET head_seq = ${seq.toString()}, anchor_seq = ${
      (seq + 1n).toString()
    }, anchor_hash = head_hash WHERE tenant_id = ${tenant}`
  );
}

Deno.test("seq past 2^53: the runtime refuses (AUDIT_UNAVAILABLE) rather than answer a row at a rounded seq, and verify never calls the chain ok", async () => {
  const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
  await setHead("c-big", SAFE - 1n);
  await using db = await PgDatabase.open({ url: UNBOUND_URL });
  const log = new PgAuditLog(db, "c-big", { redactor: new Redactor() });
  const [last] = await log.append([HONEST]);
  assert.equal(last.seq, Number.MAX_SAFE_INTEGER);
  assert.deepEqual((await log.verify()).problems, []);
  // The next two seqs (2^53, 2^53 + 1) round to one Number.
  const r = await outcome(log.append([HONEST, HONEST]));
  assert.match(r, /^AUDIT_UNAVAILABLE/);
  const v = await log.verify().then((v) => v.ok, () => false);
  assert.equal(v, false, "verify must not pass rows it cannot place");
});

Deno.test("seq at bigint max: a batch that would pass it is refused whole (22003), nothing written, head unchanged; the runtime's append is refused too", async () => {
  const MAX = 9223372036854775807n;
  await setHead("c-max", MAX - 2n);
  const sql = raw(UNBOUND_URL);
  const answers: string[] = [];
  try {
    answers.push(await append(sql, "c-max", json(batch(3))));
    answers.push(await append(sql, "c-max", json(batch(2))));
    answers.push(await append(sql, "c-max", json(batch(1))));
  } finally {
    await sql.end();
  }
  assert.deepEqual(answers, ["22003", "appended", "22003"]);
  assert.equal((await headOf("c-max")).seq, MAX.toString());
  assert.equal((await stored("c-max")).length, 2);
  await using db = await PgDatabase.open({ url: UNBOUND_URL });
  const log = new PgAuditLog(db, "c-max", { redactor: new Redactor() });
  // Refused either way (a value out of range: the rows' own refusal, AUDIT_ROW_REFUSED).
  assert.match(await outcome(log.append([HONEST])), /^AUDIT_(UNAVAILABLE|ROW_REFUSED)/);
  assert.equal((await headOf("c-max")).seq, MAX.toString());
});

// ---------------------------------------------------------------------------------------------
// Batch sizes through the runtime

Deno.test("PgAuditLog.append with 0, 1 and 500 events (page-like text mixed in): 0 touches nothing, every returned row is the stored row, the chain verifies", async () => {
  await using db = await PgDatabase.open({ url: UNBOUND_URL, max: 1 });
  const log = new PgAuditLog(db, "c-batch", { redactor: new Redactor() });
  const h0 = await headOf("c-batch");
  assert.deepEqual(await log.append([]), []);
  assert.deepEqual(await headOf("c-batch"), h0);
  const one = await log.append([HONEST]);
  const events = Array.from({ length: 500 }, (_, i) => ({
    ...HONEST,
    method: HOSTILE[i % HOSTILE.length][1].slice(0, 1000),
    reason: `r${i}`,
    session: i % 2 ? null : `s${i}`,
  }));
  const many = await log.append(events);
  assert.equal(many.length, 500);
  assert.deepEqual(many.map((r) => r.seq), many.map((_, i) => Number(h0.seq) + 2 + i));
  const rows = await stored("c-batch", Number(h0.seq));
  assert.deepEqual(rows.map(columns), [...one, ...many].map(columns));
  assert.deepEqual(await problems("c-batch"), []);
});

Deno.test("every tenant this file did not forge in (or push past 2^53) verifies, and c-globex holds only its own runtime's rows", async () => {
  const kinds = await owner.transaction((tx) =>
    tx<{ kind: string }[]>`SELECT DISTINCT kind FROM audit_events WHERE tenant_id = 'c-globex'`
  );
  assert.deepEqual(kinds.map((k) => k.kind).sort(), ["honest"]);
  for (const t of TENANTS.filter((t) => !["c-forge", "c-big", "c-max", "c-types"].includes(t))) {
    assert.deepEqual(await problems(t), [], t);
  }
});

Deno.test(clusterTeardown("pg chain attack tests", pg, owner));
