import assert from "node:assert/strict";
import { processRedactor, secretForms } from "../redact/mod.ts";
import { openDatabase, SqliteAuditLog } from "../store/mod.ts";
import { JsonlMirror } from "./jsonl_mirror.ts";
import { verifyJsonl } from "./verify.ts";

/** Rows of every kind a mirror carries. */
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

/** Every way the planted value can appear in a mirror line. */
function leaks(text: string, value: string): string[] {
  return secretForms(value).filter((f) => text.includes(f));
}

Deno.test("JsonlMirror rotates and the rotated files still verify as one chain", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/omotai.db`);
  try {
    using mirror = new JsonlMirror(`${dir}/audit.jsonl`, { maxBytes: 1500, keep: 20 });
    const log = new SqliteAuditLog(db, { redactor: processRedactor(), mirror });
    fill(log, 20);
    const files = JsonlMirror.files(`${dir}/audit.jsonl`, 20);
    assert.ok(files.length > 2, `rotated into ${files.length} files`);
    const result = verifyJsonl(files);
    assert.deepEqual(result.problems, []);
    assert.equal(result.rows, 20);
    // Dropping a line from a rotated file is noticed.
    const lines = Deno.readTextFileSync(files[0]).split("\n");
    lines.splice(1, 1);
    Deno.writeTextFileSync(files[0], lines.join("\n"));
    assert.equal(verifyJsonl(files).ok, false);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("JsonlMirror redacts its lines with the process redactor, a row kept before its value was known included", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/omotai.db`);
  const secret = `audit-${crypto.randomUUID()}`;
  try {
    using mirror = new JsonlMirror(`${dir}/audit.jsonl`);
    const log = new SqliteAuditLog(db, { redactor: processRedactor(), mirror });
    const event = {
      kind: "request",
      source: "request" as const,
      decision: "deny" as const,
      reason: `saw ${btoa(`user:${secret}`)}`,
    };
    log.append(event);
    assert.equal(log.rows()[0].reason, event.reason, "nothing to redact yet");
    processRedactor().add([secret]);
    await log.appendSoon(event);
    assert.match(log.rows()[1].reason!, /^saw dXNlcj.\[redacted\]/);
    // A row written before the value was known is redacted on its way into the mirror.
    mirror.write(log.rows()[0]);
    const lines = Deno.readTextFileSync(`${dir}/audit.jsonl`).trim().split("\n");
    assert.equal(lines.length, 3);
    // The first line went out before the value was known: nothing can take it back.
    assert.notDeepEqual(leaks(lines[0], secret), []);
    assert.deepEqual(leaks(lines.slice(1).join("\n"), secret), []);
    assert.match(lines[2], /"reason":"saw dXNlcj.\[redacted\]"/);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});
