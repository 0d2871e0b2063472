import assert from "node:assert/strict";
import { processRedactor, REDACTED, Redactor, secretForms } from "../redact/mod.ts";
import { openDatabase } from "./database.ts";
import { SqliteAuditLog } from "./sqlite_audit_log.ts";
import { auditOrigin, GENESIS_HASH } from "./audit_row.ts";
import { JsonlMirror } from "../audit/jsonl_mirror.ts";
import { pruneAudit, verifyAudit } from "./sqlite_audit_store.ts";
import type { AuditWriterOptions } from "./audit_store.ts";
import { verifyJsonl } from "../audit/verify.ts";

async function withLog(
  fn: (ctx: { log: SqliteAuditLog; db: ReturnType<typeof openDatabase>; dir: string }) => void,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/omotai.db`);
  try {
    fn({ log: new SqliteAuditLog(db, { redactor: processRedactor() }), db, dir });
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function fill(log: SqliteAuditLog, n: number): void {
  for (let i = 0; i < n; i++) {
    log.append({
      kind: "request",
      source: "request",
      session: "s1",
      origin: `http://127.0.0.${i % 3 + 1}:8000/secret/path?token=abc${i}`,
      method: "GET",
      decision: i % 2 ? "deny" : "allow",
      reason: i % 2 ? "ORIGIN_NOT_ALLOWED" : "OK",
      module: "baseline",
    });
  }
}

Deno.test("SqliteAuditLog.append() chains rows from genesis and stores origins only", () =>
  withLog(({ log, db }) => {
    fill(log, 5);
    const rows = log.rows();
    assert.equal(rows.length, 5);
    assert.equal(rows[0].prev_hash, GENESIS_HASH);
    assert.equal(rows[1].prev_hash, rows[0].hash);
    assert.equal(rows[0].origin, "http://127.0.0.1:8000");
    assert.ok(!JSON.stringify(rows).includes("token"));
    assert.ok(!JSON.stringify(rows).includes("secret"));
    assert.deepEqual(verifyAudit(db).problems, []);
  }));

Deno.test("audit table refuses UPDATE and DELETE", () =>
  withLog(({ log, db }) => {
    fill(log, 3);
    assert.throws(
      () => db.exec("UPDATE audit SET decision = 'allow' WHERE seq = 2"),
      /APPEND_ONLY/,
    );
    assert.throws(() => db.exec("DELETE FROM audit WHERE seq = 2"), /APPEND_ONLY/);
    assert.equal(verifyAudit(db).ok, true);
  }));

Deno.test("verifyAudit() detects an edited row", () =>
  withLog(({ log, db }) => {
    fill(log, 6);
    db.exec("DROP TRIGGER audit_no_update");
    db.exec("UPDATE audit SET decision = 'allow', reason = 'OK' WHERE seq = 4");
    const result = verifyAudit(db);
    assert.equal(result.ok, false);
    assert.match(result.problems[0], /row 4: contents do not match/);
  }));

Deno.test("verifyAudit() detects a removed row in the middle", () =>
  withLog(({ log, db }) => {
    fill(log, 6);
    db.exec("DROP TRIGGER audit_no_delete");
    db.exec("DELETE FROM audit WHERE seq = 3");
    assert.match(verifyAudit(db).problems.join("\n"), /row 4: follows row 2/);
  }));

Deno.test("verifyAudit() detects a removed tail row", () =>
  withLog(({ log, db }) => {
    fill(log, 6);
    db.exec("DROP TRIGGER audit_no_delete");
    db.exec("DELETE FROM audit WHERE seq = 6");
    assert.match(verifyAudit(db).problems.join("\n"), /head: .* row 6 .* found 5/);
  }));

Deno.test("verifyAudit() detects an inserted row", () =>
  withLog(({ log, db }) => {
    fill(log, 4);
    const rows = log.rows();
    // A forged row that copies the head's link but not a valid hash, then a real append.
    db.prepare(
      `INSERT INTO audit (seq, ts, kind, source, decision, prev_hash, hash)
       VALUES (5, ?, 'navigate', 'action', 'allow', ?, ?)`,
    ).run(new Date().toISOString(), rows[3].hash, "f".repeat(64));
    fill(log, 1);
    const result = verifyAudit(db);
    assert.equal(result.ok, false);
    assert.match(result.problems.join("\n"), /row 5: contents do not match/);
  }));

Deno.test("pruneAudit() keeps the chain verifiable from the new head", () =>
  withLog(({ log, db }) => {
    fill(log, 5);
    const cutoff = new Date(Date.now() + 10);
    const wait = Date.now() + 20;
    while (Date.now() < wait) { /* rows after the cutoff */ }
    fill(log, 3);
    const { removed, anchorSeq } = pruneAudit(db, cutoff);
    assert.equal(removed, 5);
    assert.equal(anchorSeq, 6);
    assert.deepEqual(verifyAudit(db).problems, []);
    fill(log, 2);
    assert.deepEqual(verifyAudit(db).problems, []);
    assert.equal(pruneAudit(db, new Date(Date.now() + 60_000)).removed, 5);
    assert.deepEqual(verifyAudit(db).problems, []);
    fill(log, 1);
    assert.deepEqual(verifyAudit(db).problems, []);
    assert.equal(log.rows()[0].seq, 11);
  }));

Deno.test("auditOrigin() keeps only the origin", () => {
  assert.equal(auditOrigin("https://user:pw@Bank.test/x?y=1#z"), "https://bank.test");
  assert.equal(auditOrigin("127.0.0.3:9000"), "127.0.0.3:9000");
  assert.equal(auditOrigin("javascript:alert(1)"), "javascript:");
  assert.equal(auditOrigin("not a url/with path"), null);
  assert.equal(auditOrigin(undefined), null);
});

Deno.test("SqliteAuditLog.appendSoon() commits a burst in one transaction, chained, between sync appends", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/omotai.db`);
  try {
    const log = new SqliteAuditLog(db, { redactor: processRedactor() });
    log.append({ kind: "runtime_started", source: "lifecycle", decision: "event" });
    const burst = Array.from({ length: 100 }, (_, i) =>
      log.appendSoon({
        kind: "request",
        source: "request",
        origin: `https://site.test/p/${i}?q=secret`,
        method: "GET",
        decision: "allow",
        reason: "OK",
      }));
    // Nothing is written until the burst is complete.
    assert.equal(log.rows().length, 1);
    const rows = await Promise.all(burst);
    assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: 100 }, (_, i) => i + 2));
    log.append({ kind: "runtime_stopped", source: "lifecycle", decision: "event" });
    assert.equal(log.rows().length, 102);
    assert.equal(verifyAudit(db).ok, true);
    assert.ok(log.rows().every((r) => !String(r.origin).includes("secret")));
  } finally {
    db.close();
  }
  // A batch that cannot be written fails every row in it (callers deny).
  const db2 = openDatabase(`${dir}/omotai.db`);
  const log2 = new SqliteAuditLog(db2, { redactor: processRedactor() });
  db2.close();
  const results = await Promise.allSettled([
    log2.appendSoon({ kind: "request", source: "request", decision: "allow" }),
    log2.appendSoon({ kind: "request", source: "request", decision: "allow" }),
  ]);
  for (const r of results) {
    assert.equal(r.status, "rejected");
    assert.equal((r as PromiseRejectedResult).reason.code, "AUDIT_UNAVAILABLE");
  }
  await Deno.remove(dir, { recursive: true });
});

/** Every way the planted value can appear in a stored row or a mirror line. */
function leaks(text: string, value: string): string[] {
  return secretForms(value).filter((f) => text.includes(f));
}

Deno.test("SqliteAuditLog.append() redacts secret forms in every field before hashing and storing", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/omotai.db`);
  const secret = "s3cr3t-Pa55 w/ord";
  const redactor = new Redactor();
  redactor.add([secret]);
  const forms = secretForms(secret);
  try {
    using mirror = new JsonlMirror(`${dir}/audit.jsonl`, { redactor });
    const log = new SqliteAuditLog(db, { redactor, mirror });
    for (let i = 0; i < forms.length; i++) {
      const f = forms[i];
      log.append({
        kind: `login ${f}`,
        source: "action",
        session: `s-${f}`,
        agent: `agent ${f}`,
        origin: `https://bank.test/?q=${f}`,
        method: `POST ${f}`,
        decision: "deny",
        reason: `FORM_FIELD (${f})`,
        module: `mod-${f}`,
        rule: `rule: ${f}`,
      });
    }
    const rows = log.rows();
    assert.equal(rows.length, forms.length);
    assert.deepEqual(leaks(JSON.stringify(rows), secret), []);
    for (const [field, value] of Object.entries(rows[0])) {
      if (["kind", "session", "agent", "method", "reason", "module", "rule"].includes(field)) {
        assert.ok(String(value).includes(REDACTED), `${field}: ${value}`);
      }
    }
    assert.equal(rows[0].reason, `FORM_FIELD (${REDACTED})`);
    assert.equal(rows[0].decision, "deny");
    // The chain covers what is stored, in the database and in the mirror.
    assert.deepEqual(verifyAudit(db).problems, []);
    const jsonl = Deno.readTextFileSync(`${dir}/audit.jsonl`);
    assert.deepEqual(leaks(jsonl, secret), []);
    assert.deepEqual(verifyJsonl([`${dir}/audit.jsonl`]).problems, []);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SqliteAuditLog refuses to be built without a redactor, so no row can be stored unredacted", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/omotai.db`);
  try {
    for (const options of [undefined, {}, { redactor: {} }, { redactor: null }]) {
      assert.throws(
        () => new SqliteAuditLog(db, options as unknown as AuditWriterOptions),
        TypeError,
        JSON.stringify(options),
      );
    }
    assert.equal(db.prepare("SELECT count(*) AS n FROM audit").get()?.n, 0);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SqliteAuditLog.append() redacts the message of an AUDIT_UNAVAILABLE error", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/omotai.db`);
  const redactor = new Redactor();
  // The driver's message is passed on: pretend it carries a secret.
  redactor.add(["is not open"]);
  const log = new SqliteAuditLog(db, { redactor });
  db.close();
  try {
    assert.throws(
      () => log.append({ kind: "request", source: "request", decision: "allow" }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, "AUDIT_UNAVAILABLE");
        assert.ok(!err.message.includes("is not open"), err.message);
        assert.ok(err.message.includes(REDACTED), err.message);
        return true;
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
