import assert from "node:assert/strict";
import { OmotaiError } from "../errors.ts";
import type { ChainView } from "../store/audit_chain.ts";
import {
  checkAgainst,
  checkpointSigned,
  exportCheckpointKey,
  generateCheckpointKey,
  importCheckpointKey,
  importCheckpointPublicKey,
  parseCheckpoint,
  signCheckpoint,
} from "./checkpoint.ts";

const key = generateCheckpointKey();
const other = generateCheckpointKey();
const H = (n: number) => n.toString(16).padStart(64, "0");

/** A chain of rows anchor..head whose row n has hash H(n). */
function chain(anchor: number, head: number, rewritten: Record<number, string> = {}): ChainView {
  return {
    anchor: { seq: anchor, prevHash: H(anchor - 1) },
    head: { seq: head, hash: rewritten[head] ?? H(head) },
    hashAt: (seq) => seq >= anchor && seq <= head ? rewritten[seq] ?? H(seq) : undefined,
  };
}

const cp = (seq: number, k = key, tenant = "acme") =>
  signCheckpoint(k, { tenant, seq, hash: H(seq), runtime: "rt-1" });

Deno.test("signCheckpoint() signs a head that checkpointSigned() accepts with its key only", () => {
  const c = cp(5);
  assert.equal(c.v, 1);
  assert.equal(c.key_id, key.keyId);
  assert.ok(checkpointSigned(c, key.public));
  assert.ok(!checkpointSigned(c, other.public));
  // Every member is covered.
  for (
    const tampered of [
      { ...c, seq: 6 },
      { ...c, hash: H(6) },
      { ...c, tenant: "globex" },
      { ...c, ts: "2020-01-01T00:00:00.000Z" },
      { ...c, runtime: "rt-2" },
      { ...c, sig: c.sig.slice(0, -4) + "AAA=" },
      { ...c, sig: "" },
    ]
  ) assert.ok(!checkpointSigned(tampered, key.public), JSON.stringify(tampered));
});

Deno.test("exportCheckpointKey() round-trips through importCheckpointKey(); other keys are CHECKPOINT_KEY_INVALID", () => {
  const pem = exportCheckpointKey(key);
  assert.match(pem.private, /BEGIN PRIVATE KEY/);
  const again = importCheckpointKey(pem.private);
  assert.equal(again.keyId, key.keyId);
  assert.ok(checkpointSigned(cp(1, again), importCheckpointPublicKey(pem.public)));
  for (const bad of ["", "not a key", pem.public]) {
    assert.throws(
      () => importCheckpointKey(bad),
      (e: unknown) => e instanceof OmotaiError && e.code === "CHECKPOINT_KEY_INVALID",
    );
  }
  assert.throws(() => importCheckpointPublicKey("junk"), /Ed25519/);
});

Deno.test("parseCheckpoint() takes exactly a checkpoint's members", () => {
  const c = cp(3);
  assert.deepEqual(parseCheckpoint(JSON.parse(JSON.stringify(c))), c);
  for (
    const bad of [
      null,
      "x",
      { ...c, v: 2 },
      { ...c, extra: 1 },
      { ...c, seq: -1 },
      { ...c, hash: "zz" },
    ]
  ) assert.equal(parseCheckpoint(bad), undefined);
});

Deno.test("checkAgainst() vectors: intact, rewritten, shortened, pruned, foreign-signed, other tenants", () => {
  const vectors: [string, ChainView, number[], RegExp[]][] = [
    ["intact chain", chain(1, 10), [0, 4, 10], []],
    ["a rewritten row", chain(1, 10, { 4: H(99) }), [4], [/row 4 is not the row that was signed/]],
    [
      "a rewrite from row 2 on passes rows before it only",
      chain(1, 10, { 2: H(90), 3: H(91), 4: H(92) }),
      [1, 3],
      [/row 3 is not the row that was signed/],
    ],
    ["a chain cut short", chain(1, 6), [8], [/ends at row 6; signed rows were removed/]],
    ["pruned below the anchor", chain(5, 10), [2, 4, 7], []],
    [
      "an anchor that does not match",
      {
        ...chain(5, 10),
        anchor: { seq: 5, prevHash: H(77) },
      },
      [4],
      [/the anchor does not match/],
    ],
  ];
  for (const [name, view, seqs, expected] of vectors) {
    const r = checkAgainst(view, "acme", seqs.map((s) => cp(s)), key.public);
    assert.equal(r.problems.length, expected.length, `${name}: ${r.problems.join("; ")}`);
    expected.forEach((re, i) => assert.match(r.problems[i], re, name));
  }
  // A cut the anchor hides: signed rows gone below it, younger than the retention.
  const cut = { ...chain(11, 10), retentionMs: 90 * 86_400_000 };
  const hidden = checkAgainst(cut, "acme", [cp(4), cp(10)], key.public);
  assert.equal(hidden.problems.length, 2, hidden.problems.join("; "));
  assert.match(hidden.problems[0], /removed before the retention allows; the history was cut/);
  // The same checkpoints, signed long ago, pruned legitimately: fine.
  const old = [4, 10].map((seq) =>
    signCheckpoint(key, { tenant: "acme", seq, hash: H(seq), runtime: "rt-1" }, new Date(0))
  );
  assert.deepEqual(checkAgainst(cut, "acme", old, key.public).problems, []);
  const foreign = checkAgainst(chain(1, 10), "acme", [cp(3, other)], key.public);
  assert.match(foreign.problems[0], /not signed by this key/);
  const elsewhere = checkAgainst(chain(1, 2), "acme", [cp(9, key, "globex")], key.public);
  assert.deepEqual(elsewhere, { checked: 0, problems: [] });
});
