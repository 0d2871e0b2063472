import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  auditFields,
  type AuditRow,
  chainedRow,
  chainHash,
  GENESIS_HASH,
  placedRow,
  rowHash,
  rowTail,
} from "./audit_row.ts";

/**
 * Rows with the hash every stored chain already holds: the hash's definition is a format, and
 * a refactor that moved one byte of it would break every chain written before.
 */
const VECTORS: { row: Omit<AuditRow, "hash">; hash: string }[] = [
  {
    row: {
      seq: 1,
      ts: "2026-12-03T06:50:00.000Z",
      session: null,
      agent: null,
      kind: "click",
      source: "action",
      origin: "https://a.test",
      method: "POST",
      decision: "allow",
      reason: "OK",
      module: "baseline",
      rule: "form-target",
      prev_hash: GENESIS_HASH,
    },
    hash: "8496706f4ee8f5c679b7a19a5078f4149bacf0699c99e58a3ca58474001c35ee",
  },
  {
    row: {
      seq: Number.MAX_SAFE_INTEGER,
      ts: "t",
      session: 's"q\\b\u0001\n\u2028',
      agent: "ağent😀",
      kind: "k",
      source: "request",
      origin: null,
      method: null,
      decision: "deny",
      reason: null,
      module: null,
      rule: null,
      prev_hash: "f".repeat(64),
    },
    hash: "09d78db01ca570d3688317d6e9f365fb894033498ed13c44fbc7d00385cb78d4",
  },
];

Deno.test("rowHash() gives the hash stored chains hold, for every vector", () => {
  for (const { row, hash } of VECTORS) assert.equal(rowHash(row), hash);
});

Deno.test("rowHash() is SHA-256 over the previous hash, a newline and the fields' JSON array", () => {
  for (const { row } of VECTORS) {
    const fields = [
      row.seq,
      row.ts,
      row.session,
      row.agent,
      row.kind,
      row.source,
      row.origin,
      row.method,
      row.decision,
      row.reason,
      row.module,
      row.rule,
    ];
    const expected = createHash("sha256").update(`${row.prev_hash}\n${JSON.stringify(fields)}`)
      .digest("hex");
    assert.equal(rowHash(row), expected);
  }
});

Deno.test("rowTail() with chainHash() hashes as rowHash() does: '[' + seq + ',' + tail is the array", () => {
  for (const { row, hash } of VECTORS) {
    const tail = rowTail(row);
    assert.ok(tail.endsWith("]") && !tail.startsWith("["), tail);
    assert.equal(chainHash(row.prev_hash, row.seq, tail), hash);
  }
});

Deno.test("chainHash() refuses a seq that is not a safe integer (its JSON would not be its text)", () => {
  for (const seq of [1.5, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity]) {
    assert.throws(() => chainHash(GENESIS_HASH, seq, "]"), RangeError, String(seq));
  }
});

Deno.test("placedRow() and chainedRow() build the same row, redacted before it is hashed", () => {
  const redact = (s: string) => s.replaceAll("hunter2", "[redacted]");
  const event = {
    kind: "fill",
    source: "action" as const,
    decision: "allow" as const,
    reason: "typed hunter2",
    origin: "https://shop.test/cart?token=hunter2",
  };
  const row = chainedRow(event, { seq: 7, ts: "t", prevHash: GENESIS_HASH }, redact);
  assert.equal(row.reason, "typed [redacted]");
  assert.equal(row.origin, "https://shop.test");
  const { seq: _, prev_hash: __, hash: ___, ...fields } = row;
  assert.deepEqual(placedRow(fields, 7, GENESIS_HASH), row);
  assert.deepEqual(Object.keys(row), [
    "seq",
    "ts",
    "session",
    "agent",
    "kind",
    "source",
    "origin",
    "method",
    "decision",
    "reason",
    "module",
    "rule",
    "prev_hash",
    "hash",
  ]);
});

Deno.test("auditFields() makes page text storable: U+0000 and unpaired surrogates become U+FFFD, after redaction", () => {
  const redact = (s: string) => s.replaceAll("hunter2", "[redacted]");
  const f = auditFields(
    {
      kind: "click\u0000",
      source: "action",
      decision: "deny",
      method: "POST\u0000",
      reason: "x\uD800y\uDC00z hunter2\u0000",
      rule: "😀 \uD83D",
      module: "a\uDC00\uD800b",
    },
    "t",
    redact,
  );
  assert.deepEqual([f.kind, f.method, f.reason, f.rule, f.module], [
    "click\uFFFD",
    "POST\uFFFD",
    "x\uFFFDy\uFFFDz [redacted]\uFFFD",
    "😀 \uFFFD",
    "a\uFFFD\uFFFDb",
  ]);
  for (const v of Object.values(f)) {
    if (typeof v === "string") assert.ok(v.isWellFormed() && !v.includes("\u0000"), v);
  }
});

Deno.test("auditFields() keeps a well-formed pair and every other control character as they are", () => {
  const text = "😀\u0001\u001f\u007f\u2028\ufeff";
  const f = auditFields({ kind: text, source: "action", decision: "allow" }, "t", (s) => s);
  assert.equal(f.kind, text);
});

Deno.test("auditFields() stores what a caller's untyped value says as text, so its hash covers what is stored", () => {
  const f = auditFields(
    { kind: "k", source: "action", decision: "allow", reason: 5 as unknown as string },
    "t",
    (s) => s,
  );
  assert.equal(f.reason, "5");
});
