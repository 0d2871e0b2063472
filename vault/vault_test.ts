import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { passphraseKeySource, rawKeySource, type VaultKeySource } from "./key.ts";
import { type SecretInfo, Vault } from "./vault.ts";
import { VaultError } from "./errors.ts";
import { SqliteVaultRecords, type VaultRecords } from "./records.ts";

const code = (c: string) => (err: unknown) => err instanceof VaultError && err.code === c;
const randomKey = (): VaultKeySource =>
  rawKeySource(btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))));

/** A WAL-mode database file in a temporary directory, as the runtime opens it. */
async function withDb(fn: (db: DatabaseSync, path: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-vault-" });
  const path = join(dir, "omotai.db");
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL");
  try {
    await fn(db, path);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
}

function flipByte(db: DatabaseSync, id: string, at: number): void {
  const row = db.prepare("SELECT sealed FROM vault_secrets WHERE id = ?").get(id) as {
    sealed: Uint8Array;
  };
  const sealed = row.sealed.slice();
  sealed[at < 0 ? sealed.length + at : at] ^= 0x80;
  db.prepare("UPDATE vault_secrets SET sealed = ? WHERE id = ?").run(sealed, id);
}

Deno.test("Vault.open creates its tables, add/reveal round-trip and reveal records the use", async () => {
  await withDb(async (db) => {
    const key = randomKey();
    using vault = await Vault.open(db, key);
    await vault.add("shop.password", "password", "s3cret-ünïcode");
    await vault.add("shop.user", "username", "alice");
    assert.equal(await vault.reveal("shop.password"), "s3cret-ünïcode");
    const listed = vault.list();
    assert.deepEqual(listed.map((s) => [s.id, s.kind]), [
      ["shop.password", "password"],
      ["shop.user", "username"],
    ]);
    assert.match(listed[0].lastUsedAt ?? "", /^\d{4}-\d\d-\d\dT/);
    assert.equal(listed[1].lastUsedAt, null);
    using again = await Vault.open(db, key);
    assert.equal(await again.reveal("shop.user"), "alice");
  });
});

Deno.test("Vault.open with a wrong key fails with VAULT_KEY_MISMATCH, before any secret is read", async () => {
  await withDb(async (db) => {
    (await Vault.open(db, randomKey()))[Symbol.dispose]();
    await assert.rejects(Vault.open(db, randomKey()), code("VAULT_KEY_MISMATCH"));
    await assert.rejects(Vault.open(db, passphraseKeySource("guess")), (err) => {
      assert.ok(code("VAULT_KEY_MISMATCH")(err));
      assert.match((err as Error).message, /set up with a raw key/);
      return true;
    });
  });
});

Deno.test("Vault.reveal refuses a ciphertext with one flipped byte with VAULT_TAMPERED", async () => {
  await withDb(async (db) => {
    using vault = await Vault.open(db, randomKey());
    await vault.add("a", "generic", "value-a");
    // The version byte, the nonce, the ciphertext and the tag.
    for (const at of [0, 5, 15, -1]) {
      const before = db.prepare("SELECT sealed FROM vault_secrets WHERE id = 'a'").get();
      flipByte(db, "a", at);
      await assert.rejects(vault.reveal("a"), code("VAULT_TAMPERED"), `byte ${at}`);
      db.prepare("UPDATE vault_secrets SET sealed = ? WHERE id = 'a'").run(
        (before as { sealed: Uint8Array }).sealed,
      );
    }
    assert.equal(await vault.reveal("a"), "value-a");
  });
});

Deno.test("Vault.reveal refuses a ciphertext moved onto another id or kind with VAULT_TAMPERED", async () => {
  await withDb(async (db) => {
    using vault = await Vault.open(db, randomKey());
    await vault.add("bank.password", "password", "bank-secret");
    await vault.add("blog.password", "password", "blog-secret");
    db.exec(
      "UPDATE vault_secrets SET sealed = (SELECT sealed FROM vault_secrets WHERE id = 'bank.password') WHERE id = 'blog.password'",
    );
    await assert.rejects(vault.reveal("blog.password"), (err) => {
      assert.ok(code("VAULT_TAMPERED")(err));
      assert.ok(!(err as Error).message.includes("secret"), "no value in the message");
      return true;
    });
    db.exec("UPDATE vault_secrets SET kind = 'generic' WHERE id = 'bank.password'");
    await assert.rejects(vault.reveal("bank.password"), code("VAULT_TAMPERED"));
  });
});

Deno.test("Vault leaves no planted value in the database file or its WAL", async () => {
  await withDb(async (db, path) => {
    const planted = `planted-${crypto.randomUUID()}`;
    using vault = await Vault.open(db, passphraseKeySource("a passphrase for the plant test"));
    await vault.add("planted", "password", planted);
    await vault.add("other", "generic", planted.toUpperCase());
    assert.equal(await vault.reveal("planted"), planted);
    const needles = [planted, planted.toUpperCase(), planted.slice(8, 24)];
    for (const file of [path, `${path}-wal`]) {
      const text = new TextDecoder("latin1").decode(await Deno.readFile(file));
      for (const n of needles) assert.ok(!text.includes(n), `${file} holds the value`);
    }
    assert.ok((await Deno.stat(`${path}-wal`)).size > 0, "the WAL was written");
  });
});

Deno.test("Vault.rekey keeps every value and the old key then fails with VAULT_KEY_MISMATCH", async () => {
  await withDb(async (db) => {
    const oldKey = randomKey();
    const newKey = passphraseKeySource("the new vault passphrase");
    const stale = await Vault.open(db, oldKey);
    {
      using vault = await Vault.open(db, oldKey);
      await vault.add("one", "password", "value-one");
      await vault.add("two", "totp", "JBSWY3DPEHPK3PXP");
      assert.equal(await vault.rekey(newKey), 2);
      assert.equal(await vault.reveal("one"), "value-one", "the same instance goes on");
    }
    await assert.rejects(Vault.open(db, oldKey), code("VAULT_KEY_MISMATCH"));
    await assert.rejects(stale.reveal("one"), code("VAULT_KEY_MISMATCH"), "an open old vault");
    // Nor can it add a value sealed under the old key: nothing is written.
    await assert.rejects(stale.add("three", "generic", "value-three"), code("VAULT_KEY_MISMATCH"));
    assert.equal(Vault.has(db, "three"), false);
    using fresh = await Vault.open(db, newKey);
    assert.equal(await fresh.reveal("one"), "value-one");
    assert.equal(await fresh.reveal("two"), "JBSWY3DPEHPK3PXP");
    // Back to a raw key: a passphrase gets a fresh salt each rekey, a raw key ignores it.
    const raw = randomKey();
    assert.equal(await fresh.rekey(raw), 2);
    await assert.rejects(Vault.open(db, newKey), code("VAULT_KEY_MISMATCH"));
    using last = await Vault.open(db, raw);
    assert.equal(await last.reveal("two"), "JBSWY3DPEHPK3PXP");
  });
});

Deno.test("Vault.list never contains values; bad ids, kinds, duplicates and unknown ids have codes", async () => {
  await withDb(async (db) => {
    const vault = await Vault.open(db, randomKey());
    const value = `value-${crypto.randomUUID()}`;
    await vault.add("x.login", "password", value);
    const shown = JSON.stringify(vault.list());
    assert.ok(!shown.includes(value), shown);
    assert.deepEqual(Object.keys(vault.list()[0]).sort(), [
      "createdAt",
      "id",
      "kind",
      "lastUsedAt",
    ]);
    await assert.rejects(vault.add("x.login", "password", "again"), code("SECRET_EXISTS"));
    for (const id of ["", "Upper", "-lead", "a/b", "a".repeat(65), "spa ce"]) {
      await assert.rejects(vault.add(id, "generic", value), code("BAD_SECRET_ID"), id);
    }
    await assert.rejects(
      vault.add("y", "ssh-key" as "generic", value),
      code("BAD_SECRET_KIND"),
    );
    await assert.rejects(vault.reveal("nope"), code("SECRET_NOT_FOUND"));
    assert.equal(await vault.remove("x.login"), true);
    assert.equal(await vault.remove("x.login"), false);
    assert.deepEqual(vault.list(), []);
    vault[Symbol.dispose]();
    assert.throws(() => vault.list(), code("VAULT_CLOSED"));
  });
});

Deno.test("Vault.has answers by id without a key, and no tables means no secrets", async () => {
  await withDb(async (db) => {
    assert.equal(Vault.has(db, "a"), false);
    const vault = await Vault.open(db, randomKey());
    await vault.add("a", "password", "value-a");
    assert.equal(Vault.has(db, "a"), true);
    assert.equal(vault.has("a"), true);
    assert.equal(Vault.has(db, "b"), false);
    assert.equal(await vault.remove("a"), true);
    assert.equal(vault.has("a"), false);
    assert.equal(Vault.has(db, "a"), false);
  });
});

/** The SQLite store as an asynchronous one only (no listNow/hasNow): a shared store's shape. */
function asyncOnly(db: DatabaseSync): VaultRecords {
  const r = new SqliteVaultRecords(db);
  return {
    meta: () => r.meta(),
    insertMetaIfMissing: (m) => r.insertMetaIfMissing(m),
    get: (id) => r.get(id),
    list: () => r.list(),
    listSealed: () => r.listSealed(),
    put: (rec, check) => r.put(rec, check),
    touch: (id, at) => r.touch(id, at),
    delete: (id) => r.delete(id),
    replaceAll: (change) => r.replaceAll(change),
  };
}

Deno.test("Vault over an asynchronous store: list and has answer from an index kept by its own calls, refresh() and its timer", async () => {
  await withDb(async (db) => {
    const key = randomKey();
    const seen: SecretInfo[][] = [];
    using a = await Vault.open(asyncOnly(db), key, { refreshMs: 0 });
    using b = await Vault.open(asyncOnly(db), key, {
      refreshMs: 0,
      onNewSecrets: (s) => seen.push(s),
    });
    await a.add("one", "password", "value-one");
    assert.equal(a.has("one"), true, "its own add shows at once");
    assert.equal(b.has("one"), false, "another's shows after a refresh");
    assert.equal(await Vault.has(asyncOnly(db), "one"), true, "the static has asks the store");
    await b.refresh();
    assert.deepEqual(b.list().map((s) => [s.id, s.kind]), [["one", "password"]]);
    assert.deepEqual(seen.map((s) => s.map((x) => x.id)), [["one"]]);
    // reveal always asks the store, and teaches the index.
    await a.add("two", "username", "value-two");
    assert.equal(await b.reveal("two"), "value-two");
    assert.equal(b.has("two"), true);
    assert.match(b.list().find((s) => s.id === "two")?.lastUsedAt ?? "", /^\d{4}-/);
    assert.equal(await a.remove("one"), true);
    assert.equal(b.has("one"), true, "until b refreshes");
    await assert.rejects(b.reveal("one"), code("SECRET_NOT_FOUND"));
    assert.equal(b.has("one"), false, "a reveal that finds nothing forgets it");
    await a.add("three", "generic", "value-three");
    using c = await Vault.open(asyncOnly(db), key, { refreshMs: 20 });
    await a.add("four", "generic", "value-four");
    await new Promise((res) => setTimeout(res, 120));
    assert.deepEqual(c.list().map((s) => s.id), ["four", "three", "two"], "its timer refreshed");
    assert.deepEqual(seen.flat().map((s) => s.id), ["one"], "b has no timer");
  });
});

Deno.test("Vault.addIfAbsent writes an empty id once and fails closed on a held one, keeping its value", async () => {
  await withDb(async (db) => {
    using vault = await Vault.open(db, randomKey());
    const info = await vault.addIfAbsent("gh.pem", "generic", "minted-1");
    assert.deepEqual([info.id, info.kind, info.lastUsedAt], ["gh.pem", "generic", null]);
    await assert.rejects(vault.addIfAbsent("gh.pem", "generic", "minted-2"), (err) => {
      assert.ok(code("SECRET_EXISTS")(err));
      assert.ok(!String((err as Error).message).includes("minted"), "no value in the error");
      return true;
    });
    await assert.rejects(vault.add("gh.pem", "generic", "minted-3"), code("SECRET_EXISTS"));
    assert.equal(await vault.reveal("gh.pem"), "minted-1");
    await assert.rejects(vault.addIfAbsent("Bad Id", "generic", "x"), code("BAD_SECRET_ID"));
    await assert.rejects(vault.addIfAbsent("ok", "pem" as "generic", "x"), code("BAD_SECRET_KIND"));
  });
});

Deno.test("Vault.addIfAbsent: two vaults over one database file racing into one empty id: exactly one writes", async () => {
  await withDb(async (db, path) => {
    const key = randomKey();
    (await Vault.open(db, key))[Symbol.dispose]();
    // Two openers of the same file: two connections, two vaults, as two processes would be.
    const other = new DatabaseSync(path);
    other.exec("PRAGMA busy_timeout = 5000");
    try {
      using a = await Vault.open(db, key);
      using b = await Vault.open(other, key);
      for (let n = 0; n < 20; n++) {
        const id = `race-${n}`;
        const settled = await Promise.allSettled([
          a.addIfAbsent(id, "generic", `value-a-${n}`),
          b.addIfAbsent(id, "generic", `value-b-${n}`),
        ]);
        const won = settled.findIndex((s) => s.status === "fulfilled");
        assert.notEqual(won, -1, id);
        const lost = settled[1 - won] as PromiseRejectedResult;
        assert.ok(code("SECRET_EXISTS")(lost.reason), String(lost.reason));
        // The stored value is the winner's, read through either connection.
        const expected = `value-${won === 0 ? "a" : "b"}-${n}`;
        assert.equal(await a.reveal(id), expected);
        assert.equal(await b.reveal(id), expected);
      }
      assert.equal(a.list().length, 20);
    } finally {
      other.close();
    }
  });
});
