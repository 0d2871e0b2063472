/**
 * One contract for every `VaultRecords` store: run here on SQLite, and by
 * `runtime/store/pg_vault_records_test.ts` on PostgreSQL (it imports
 * {@link vaultRecordsContract}; this file's own SQLite tests register only when it is the
 * test module run, so they do not run twice).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  type SealedRecord,
  type SecretRecord,
  SqliteVaultRecords,
  type VaultRecords,
} from "./records.ts";

/** Two handles on one empty store: two runtimes of one tenant, or two openers of a file. */
export interface RecordsPair extends AsyncDisposable {
  a: VaultRecords;
  b: VaultRecords;
}

/** Sealed-looking bytes (version 1, then random): the stores never look inside. */
export function fakeSealed(length = 45): Uint8Array {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  bytes[0] = 1;
  return bytes;
}

function sealedRecord(id: string, kind = "password"): SealedRecord {
  return { id, kind, sealed: fakeSealed(), createdAt: new Date().toISOString(), lastUsedAt: null };
}

const plain = ({ id, kind, createdAt, lastUsedAt }: SecretRecord): SecretRecord => ({
  id,
  kind,
  createdAt,
  lastUsedAt,
});

const META = { format: "1", salt: btoa("0123456789abcdef") };
/** A key-check-like value (base64 of a sealed label's length). */
const check = (label: string) => btoa(label.padEnd(54, "."));

/** The behaviours every store must have, as test definitions labelled with `label`. */
export function vaultRecordsContract(
  label: string,
  open: () => Promise<RecordsPair>,
): Deno.TestDefinition[] {
  const test = (name: string, fn: (s: RecordsPair) => Promise<void>): Deno.TestDefinition => ({
    name: `VaultRecords (${label}): ${name}`,
    fn: async () => {
      await using s = await open();
      await fn(s);
    },
  });
  return [
    test("an empty store has no meta and no secrets", async ({ a }) => {
      assert.equal(await a.meta(), undefined);
      assert.deepEqual(await a.list(), []);
      assert.deepEqual(await a.listSealed(), []);
      assert.equal(await a.get("x"), undefined);
      assert.equal(await a.delete("x"), false);
      await a.touch("x", new Date().toISOString());
    }),

    test("insertMetaIfMissing: the first writer's format and salt stay, then its check and key source", async ({ a, b }) => {
      assert.deepEqual(await a.insertMetaIfMissing(META), META);
      const other = { format: "1", salt: btoa("fedcba9876543210") };
      assert.deepEqual(await b.insertMetaIfMissing(other), META, "b reads a's salt back");
      const withCheck = { ...META, check: check("check-a"), keySource: "raw" };
      assert.deepEqual(await b.insertMetaIfMissing(withCheck), withCheck);
      assert.deepEqual(
        await a.insertMetaIfMissing({ ...other, check: check("check-b"), keySource: "passphrase" }),
        withCheck,
        "the first check stays",
      );
      assert.deepEqual(await a.meta(), withCheck);
      assert.deepEqual(await b.meta(), withCheck);
    }),

    test("put is an insert-if-absent: never overwrites; of concurrent puts of one id exactly one adds", async ({ a, b }) => {
      const meta = await a.insertMetaIfMissing({ ...META, check: check("c1"), keySource: "raw" });
      const first = sealedRecord("gh.pem", "generic");
      assert.equal(await a.put(first, meta.check!), "added");
      const second = sealedRecord("gh.pem", "generic");
      assert.equal(await b.put(second, meta.check!), "taken");
      assert.deepEqual((await a.get("gh.pem"))!.sealed, first.sealed, "the first value stays");
      for (let n = 0; n < 10; n++) {
        const id = `race-${n}`;
        const rivals = [sealedRecord(id, "generic"), sealedRecord(id, "generic")];
        const outcomes = await Promise.all([
          a.put(rivals[0], meta.check!),
          b.put(rivals[1], meta.check!),
        ]);
        assert.deepEqual([...outcomes].sort(), ["added", "taken"], id);
        const won = rivals[outcomes.indexOf("added")];
        assert.deepEqual((await b.get(id))!.sealed, won.sealed, id);
      }
      assert.equal((await a.list()).length, 11);
    }),

    test("put, get, list and listSealed keep ids, kinds, times and sealed bytes, in byte order", async ({ a, b }) => {
      const meta = await a.insertMetaIfMissing({ ...META, check: check("c1"), keySource: "raw" });
      const ids = ["b", "a_b", "a.b", "a-b", "a9"];
      const put = ids.map((id, i) => sealedRecord(id, ["password", "username", "totp"][i % 3]));
      for (const r of put) assert.equal(await a.put(r, meta.check!), "added", r.id);
      const order = ["a-b", "a.b", "a9", "a_b", "b"];
      const byId = (id: string) => put.find((r) => r.id === id)!;
      assert.deepEqual(await b.list(), order.map((id) => plain(byId(id))));
      const sealed = await b.listSealed();
      assert.deepEqual(sealed.map((r) => r.id), order);
      for (const r of sealed) {
        assert.ok(r.sealed instanceof Uint8Array);
        assert.deepEqual([...r.sealed], [...byId(r.id).sealed], r.id);
      }
      const got = await b.get("a.b");
      assert.deepEqual(got && { ...plain(got), sealed: [...got.sealed] }, {
        ...plain(byId("a.b")),
        sealed: [...byId("a.b").sealed],
      });
    }),

    test("put refuses a taken id and a stale key-check value, writing nothing", async ({ a, b }) => {
      const meta = await a.insertMetaIfMissing({ ...META, check: check("c1"), keySource: "raw" });
      const first = sealedRecord("one");
      assert.equal(await a.put(first, meta.check!), "added");
      assert.equal(await b.put(sealedRecord("one", "generic"), meta.check!), "taken");
      assert.deepEqual([...(await a.get("one"))!.sealed], [...first.sealed], "the first stays");
      assert.equal(await b.put(sealedRecord("two"), check("an old check")), "rekeyed");
      assert.equal(await a.get("two"), undefined);
      assert.deepEqual((await a.list()).map((r) => r.id), ["one"]);
    }),

    test("touch records a use; delete removes one secret only", async ({ a, b }) => {
      const meta = await a.insertMetaIfMissing({ ...META, check: check("c1"), keySource: "raw" });
      await a.put(sealedRecord("one"), meta.check!);
      await a.put(sealedRecord("two"), meta.check!);
      const at = new Date(Date.now() + 1000).toISOString();
      await b.touch("one", at);
      assert.equal((await a.get("one"))?.lastUsedAt, at);
      assert.equal((await a.get("two"))?.lastUsedAt, null);
      assert.equal(await b.delete("one"), true);
      assert.equal(await a.delete("one"), false);
      assert.deepEqual((await a.list()).map((r) => r.id), ["two"]);
    }),

    test("replaceAll writes every sealed value and the meta at once, or nothing when the store changed", async ({ a, b }) => {
      const meta = await a.insertMetaIfMissing({ ...META, check: check("c1"), keySource: "raw" });
      await a.put(sealedRecord("one"), meta.check!);
      await a.put(sealedRecord("two", "totp"), meta.check!);
      const read = await a.listSealed();
      const next = {
        salt: btoa("new-salt-16bytes"),
        check: check("c2"),
        keySource: "passphrase",
        sealed: read.map((r) => ({ id: r.id, sealed: fakeSealed(50) })),
      };
      // Another opener added a secret meanwhile: nothing is written.
      await b.put(sealedRecord("three"), meta.check!);
      assert.equal(
        await a.replaceAll({ expect: { check: meta.check!, records: read }, next }),
        false,
      );
      assert.deepEqual(await a.meta(), meta);
      const kept = await a.listSealed();
      for (const r of read) {
        assert.deepEqual([...kept.find((k) => k.id === r.id)!.sealed], [...r.sealed], r.id);
      }
      // A stale check: nothing is written either.
      const now = await a.listSealed();
      const stale = { check: check("c0"), records: now };
      assert.equal(await a.replaceAll({ expect: stale, next }), false);
      // Unchanged: everything is written.
      const all = {
        ...next,
        sealed: now.map((r) => ({ id: r.id, sealed: fakeSealed(60) })),
      };
      assert.equal(
        await b.replaceAll({ expect: { check: meta.check!, records: now }, next: all }),
        true,
      );
      assert.deepEqual(await a.meta(), {
        format: "1",
        salt: next.salt,
        check: next.check,
        keySource: "passphrase",
      });
      const after = await a.listSealed();
      assert.deepEqual(
        after.map((r) => [r.id, r.kind, r.createdAt]),
        now.map((r) => [
          r.id,
          r.kind,
          r.createdAt,
        ]),
      );
      assert.deepEqual(after.map((r) => [...r.sealed]), all.sealed.map((r) => [...r.sealed]));
      // The old check no longer admits a put.
      assert.equal(await a.put(sealedRecord("four"), meta.check!), "rekeyed");
      assert.equal(await a.put(sealedRecord("four"), next.check), "added");
    }),
  ];
}

/** Two handles on one in-memory SQLite database. */
async function sqlitePair(): Promise<RecordsPair & { db: DatabaseSync }> {
  const db = new DatabaseSync(":memory:");
  return await Promise.resolve({
    db,
    a: new SqliteVaultRecords(db),
    b: new SqliteVaultRecords(db),
    [Symbol.asyncDispose]: () => Promise.resolve(db.close()),
  });
}

if (Deno.mainModule === import.meta.url) {
  for (const t of vaultRecordsContract("sqlite", sqlitePair)) Deno.test(t);

  Deno.test("VaultRecords (sqlite): reads create no tables; the first write creates both; listNow and hasNow read at once", async () => {
    await using s = await sqlitePair();
    const tables = () =>
      (s.db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'vault_%' ORDER BY name",
      ).all() as { name: string }[]).map((r) => r.name);
    await s.a.meta();
    await s.a.list();
    assert.equal(s.a.hasNow!("x"), false);
    assert.deepEqual(s.a.listNow!(), []);
    assert.deepEqual(tables(), []);
    const meta = await s.a.insertMetaIfMissing({ ...META, check: check("c"), keySource: "raw" });
    assert.deepEqual(tables(), ["vault_meta", "vault_secrets"]);
    const r = sealedRecord("x");
    await s.b.put(r, meta.check!);
    assert.equal(s.a.hasNow!("x"), true);
    assert.deepEqual(s.a.listNow!(), [plain(r)]);
  });
}
