/**
 * The vault in a real PostgreSQL, shared by the runtimes of a tenant: the `VaultRecords`
 * contract, then `Vault` over it on two runtimes (two pools of the runtime's role): add on
 * one, reveal on the other; a wrong key; rekey; first opens racing; the tenant wall; what the
 * runtime's role can do with raw SQL; and a planted value that reaches neither the cluster's
 * files nor any error.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import postgres from "postgres";
import { asTenant, clusterTeardown, startPostgres } from "../../tests/helpers/postgres.ts";
import { vaultRecordsContract } from "../../vault/records_contract_test.ts";
import {
  passphraseKeySource,
  rawKeySource,
  Vault,
  VaultError,
  type VaultKeySource,
  type VaultRecords,
} from "../../vault/mod.ts";
import { PgDatabase } from "./pg_database.ts";
import { addTenant } from "./pg_tenants.ts";
import { PgVaultRecords } from "./pg_vault_records.ts";

const pg = await startPostgres();
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
await owner.migrate();

/** The adapter is the vault's port (checked here: runtime/store/ may not import vault/). */
const port = (r: PgVaultRecords): VaultRecords => r;

let tenants = 0;
/** A fresh tenant, so every test starts with an empty vault. */
async function newTenant(): Promise<string> {
  const t = `vault-${++tenants}`;
  await addTenant(owner, t);
  return t;
}

/**
 * Two runtimes: each its own pool of the runtime's role, shared by the tests (a pool's
 * connections cost a server process each; every test works in tenants of its own, and its
 * vaults are disposed when it ends).
 */
const shared = {
  a: await PgDatabase.open({ url: pg.appUrl }),
  b: await PgDatabase.open({ url: pg.appUrl }),
};

const code = (c: string) => (err: unknown) => err instanceof VaultError && err.code === c;
const randomKey = (): VaultKeySource =>
  rawKeySource(btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))));
const open = (db: PgDatabase, tenant: string, key: VaultKeySource, refreshMs = 0) =>
  Vault.open(port(new PgVaultRecords(db, tenant)), key, { refreshMs });

/** Every text an error carries: message, stack, causes, own fields. */
function errorText(err: unknown, depth = 0): string {
  if (depth > 5 || err === undefined || err === null) return "";
  if (!(err instanceof Error)) return String(err);
  const own = JSON.stringify(err, Object.getOwnPropertyNames(err));
  return `${err.message}\n${err.stack}\n${own}\n${errorText(err.cause, depth + 1)}`;
}

for (
  const t of vaultRecordsContract("postgres", async () => {
    const tenant = await newTenant();
    return {
      a: port(new PgVaultRecords(shared.a, tenant)),
      b: port(new PgVaultRecords(shared.b, tenant)),
      // The pools are the file's: closed by its last test.
      [Symbol.asyncDispose]: () => Promise.resolve(),
    };
  })
) Deno.test(t);

Deno.test("PgVaultRecords: a secret added on runtime A is revealed on runtime B with the same key, and shows in B's list", async () => {
  const r = shared;
  const tenant = await newTenant();
  const key = randomKey();
  using a = await open(r.a, tenant, key);
  using b = await open(r.b, tenant, key, 50);
  await a.add("shop.password", "password", "s3cret-ünïcode");
  await a.add("shop.user", "username", "alice");
  // B's index is read again every 50 ms here: A's secrets show in its list without a call.
  await new Promise((res) => setTimeout(res, 250));
  assert.deepEqual(b.list().map((s) => [s.id, s.kind, s.lastUsedAt]), [
    ["shop.password", "password", null],
    ["shop.user", "username", null],
  ]);
  assert.ok((await b.reveal("shop.password")) === "s3cret-ünïcode", "B reveals A's value");
  assert.ok((await b.reveal("shop.user")) === "alice");
  assert.match(b.list()[0].lastUsedAt ?? "", /^\d{4}-\d\d-\d\dT/);
  assert.equal(await Vault.has(port(new PgVaultRecords(r.b, tenant)), "shop.user"), true);
  await assert.rejects(b.add("shop.user", "username", "bob"), code("SECRET_EXISTS"));
  assert.equal(await b.remove("shop.user"), true);
  await a.refresh();
  assert.equal(a.has("shop.user"), false);
  await assert.rejects(a.reveal("shop.user"), code("SECRET_NOT_FOUND"));
});

Deno.test("PgVaultRecords: addIfAbsent on two runtimes racing into one empty id: exactly one writes, the other fails closed", async () => {
  const r = shared;
  const tenant = await newTenant();
  const key = randomKey();
  using a = await open(r.a, tenant, key);
  using b = await open(r.b, tenant, key);
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
    assert.ok(!errorText(lost.reason).includes("value-"), "no value in the error");
    const expected = `value-${won === 0 ? "a" : "b"}-${n}`;
    assert.ok((await a.reveal(id)) === expected, id);
    assert.ok((await b.reveal(id)) === expected, id);
  }
  // A held id is never overwritten, from either runtime.
  await assert.rejects(a.addIfAbsent("race-0", "generic", "late"), code("SECRET_EXISTS"));
  await assert.rejects(b.add("race-0", "generic", "late"), code("SECRET_EXISTS"));
  assert.ok((await b.reveal("race-0")).startsWith("value-"));
  assert.equal((await port(new PgVaultRecords(r.b, tenant)).list()).length, 20, "a row per id");
});

Deno.test("PgVaultRecords: a runtime opening the tenant's vault with another key gets VAULT_KEY_MISMATCH", async () => {
  const r = shared;
  const tenant = await newTenant();
  using a = await open(r.a, tenant, randomKey());
  await a.add("x", "generic", "value-x");
  await assert.rejects(open(r.b, tenant, randomKey()), code("VAULT_KEY_MISMATCH"));
  await assert.rejects(open(r.b, tenant, passphraseKeySource("a guess")), (err) => {
    assert.ok(code("VAULT_KEY_MISMATCH")(err));
    assert.match((err as Error).message, /set up with a raw key/);
    return true;
  });
});

Deno.test("PgVaultRecords: two runtimes opening a new vault at once agree on one salt and check; with two keys one loses", async () => {
  const r = shared;
  const same = await newTenant();
  const key = randomKey();
  const [a, b] = await Promise.all([open(r.a, same, key), open(r.b, same, key)]);
  using _a = a;
  using _b = b;
  await a.add("one", "password", "value-one");
  assert.ok((await b.reveal("one")) === "value-one");
  const two = await newTenant();
  const outcomes = await Promise.allSettled([
    open(r.a, two, randomKey()),
    open(r.b, two, randomKey()),
  ]);
  const won = outcomes.filter((o) => o.status === "fulfilled");
  const lost = outcomes.filter((o) => o.status === "rejected");
  assert.equal(won.length, 1);
  assert.ok(code("VAULT_KEY_MISMATCH")((lost[0] as PromiseRejectedResult).reason));
  for (const w of won) (w as PromiseFulfilledResult<Vault>).value[Symbol.dispose]();
});

Deno.test("PgVaultRecords: the tenant wall: another tenant's runtime lists and reveals nothing of it, and its own vault has its own salt", async () => {
  const r = shared;
  const acme = await newTenant();
  const globex = await newTenant();
  const key = randomKey();
  using a = await open(r.a, acme, key);
  await a.add("bank.password", "password", "acme-value");
  // The same key on another tenant opens another vault: its own salt and check.
  using b = await open(r.b, globex, key);
  assert.deepEqual(b.list(), []);
  assert.equal(b.has("bank.password"), false);
  await assert.rejects(b.reveal("bank.password"), code("SECRET_NOT_FOUND"));
  assert.equal(await b.remove("bank.password"), false);
  assert.equal(await Vault.has(port(new PgVaultRecords(r.b, globex)), "bank.password"), false);
  await b.add("bank.password", "password", "globex-value");
  assert.ok((await a.reveal("bank.password")) === "acme-value", "acme's is untouched");
  assert.ok((await b.reveal("bank.password")) === "globex-value");
  const salts = await owner.transaction((tx) =>
    tx<{ tenant_id: string; salt: string; key_check: string }[]>`
      SELECT tenant_id, salt, key_check FROM vault_meta
      WHERE tenant_id IN (${acme}, ${globex}) ORDER BY tenant_id`
  );
  assert.equal(salts.length, 2);
  assert.notEqual(salts[0].salt, salts[1].salt);
  assert.notEqual(salts[0].key_check, salts[1].key_check);
  // A passphrase: a tenant's key derives from its own salt, so one passphrase gives two keys.
  const c = await newTenant();
  const d = await newTenant();
  const phrase = passphraseKeySource("one passphrase, two tenants");
  using vc = await open(r.a, c, phrase);
  using vd = await open(r.b, d, phrase);
  await vc.add("p", "password", "value-c");
  const [sealed] = await owner.transaction((tx) =>
    tx<{ sealed: Uint8Array }[]>`SELECT sealed FROM vault_secrets WHERE tenant_id = ${c}`
  );
  // Copied into d's vault by the owner: d's key does not open it.
  await owner.transaction((tx) =>
    tx`INSERT INTO vault_secrets (tenant_id, id, kind, sealed, created_at)
      VALUES (${d}, 'p', 'password', ${sealed.sealed}, now())`
  );
  await assert.rejects(vd.reveal("p"), code("VAULT_TAMPERED"));
});

Deno.test("PgVaultRecords: rekey on runtime A re-seals every secret; B's old key then fails, in an open vault too, and adds nothing", async () => {
  const r = shared;
  const tenant = await newTenant();
  const oldKey = randomKey();
  const newKey = passphraseKeySource("the tenant's new vault passphrase");
  using a = await open(r.a, tenant, oldKey);
  using stale = await open(r.b, tenant, oldKey);
  await a.add("one", "password", "value-one");
  await a.add("two", "totp", "JBSWY3DPEHPK3PXP");
  const [before] = await owner.transaction((tx) =>
    tx<{ salt: string }[]>`SELECT salt FROM vault_meta WHERE tenant_id = ${tenant}`
  );
  assert.equal(await a.rekey(newKey), 2);
  assert.ok((await a.reveal("one")) === "value-one", "the same instance goes on");
  const [after] = await owner.transaction((tx) =>
    tx<{ salt: string; key_source: string }[]>`SELECT salt, key_source FROM vault_meta
      WHERE tenant_id = ${tenant}`
  );
  assert.notEqual(after.salt, before.salt, "a passphrase gets a fresh salt");
  assert.equal(after.key_source, "passphrase");
  await assert.rejects(stale.reveal("one"), code("VAULT_KEY_MISMATCH"));
  await assert.rejects(stale.add("three", "generic", "value-three"), code("VAULT_KEY_MISMATCH"));
  await assert.rejects(stale.rekey(randomKey()), code("VAULT_KEY_MISMATCH"));
  assert.equal(await Vault.has(port(new PgVaultRecords(r.a, tenant)), "three"), false);
  await assert.rejects(open(r.b, tenant, oldKey), (err) => {
    assert.ok(code("VAULT_KEY_MISMATCH")(err));
    assert.match((err as Error).message, /set up with a passphrase/);
    return true;
  });
  using fresh = await open(r.b, tenant, newKey);
  assert.ok((await fresh.reveal("two")) === "JBSWY3DPEHPK3PXP");
  await fresh.add("three", "generic", "value-three");
  assert.ok((await a.reveal("three")) === "value-three");
});

Deno.test("PgVaultRecords: the runtime's role cannot read, change, remove or lock another tenant's vault rows via SQL", async () => {
  const r = shared;
  const acme = await newTenant();
  const globex = await newTenant();
  using g = await open(r.b, globex, randomKey());
  await g.add("bank.password", "password", "globex-value");
  await g.add("bank.user", "username", "gina");
  using a = await open(r.a, acme, randomKey());
  await a.add("mine", "generic", "acme-value");
  const globexRows = () =>
    owner.transaction((tx) =>
      tx`SELECT id, kind, sealed, created_at, last_used_at FROM vault_secrets
        WHERE tenant_id = ${globex} ORDER BY id`
    );
  const globexMeta = () =>
    owner.transaction((tx) => tx`SELECT * FROM vault_meta WHERE tenant_id = ${globex}`);
  const [rowsBefore, metaBefore] = [await globexRows(), await globexMeta()];
  const sql = postgres(pg.appUrl, { max: 1, onnotice: () => {} });
  try {
    for (const t of ["vault_meta", "vault_secrets"]) {
      const [{ n }] = await sql.unsafe(`SELECT count(*)::int AS n FROM ${t}`);
      assert.equal(n, 0, `${t} with no tenant`);
      const [{ k }] = await asTenant(
        sql,
        acme,
        (tx) => tx.unsafe(`SELECT count(*)::int AS k FROM ${t} WHERE tenant_id <> '${acme}'`),
      );
      assert.equal(k, 0, `${t}: acme sees another tenant`);
      for (const mode of ["FOR UPDATE", "FOR SHARE"]) {
        const locked = await asTenant(
          sql,
          acme,
          (tx) => tx.unsafe(`SELECT 1 FROM ${t} WHERE tenant_id = '${globex}' ${mode}`),
        );
        assert.equal(locked.length, 0, `${t} ${mode}`);
      }
    }
    const refused = [
      `DELETE FROM vault_secrets`,
      `TRUNCATE vault_secrets`,
      `TRUNCATE vault_meta`,
      `DELETE FROM vault_meta`,
      `UPDATE vault_secrets SET tenant_id = '${acme}'`,
      `UPDATE vault_secrets SET id = 'moved'`,
      `UPDATE vault_secrets SET kind = 'generic'`,
      `UPDATE vault_meta SET format = '2'`,
      `UPDATE vault_meta SET tenant_id = '${acme}'`,
      `LOCK TABLE vault_secrets IN SHARE MODE`,
      `LOCK TABLE vault_meta IN ACCESS EXCLUSIVE MODE`,
      `LOCK TABLE vault_secrets IN EXCLUSIVE MODE`,
      `ALTER TABLE vault_secrets DISABLE ROW LEVEL SECURITY`,
      `DROP POLICY vault_secrets_own ON vault_secrets`,
      `INSERT INTO vault_secrets (tenant_id, id, kind, sealed, created_at)
        VALUES ('${globex}', 'evil', 'generic', '\\x${"01".repeat(40)}', now())`,
      `INSERT INTO vault_meta (tenant_id, format, salt) VALUES ('${globex}', '1', 'AAAAAAAA')`,
    ];
    for (const stmt of refused) {
      await assert.rejects(
        asTenant(sql, acme, (tx) => tx.unsafe(stmt)),
        /permission denied|row-level security|must be owner/,
        stmt,
      );
    }
    // What the role may update reaches its own tenant's rows only.
    for (
      const stmt of [
        `UPDATE vault_secrets SET sealed = '\\x${"02".repeat(40)}' WHERE tenant_id = '${globex}'`,
        `UPDATE vault_secrets SET last_used_at = now() WHERE tenant_id = '${globex}'`,
        `UPDATE vault_meta SET key_check = NULL, key_source = NULL WHERE tenant_id = '${globex}'`,
        `UPDATE vault_meta SET salt = 'AAAAAAAA' WHERE tenant_id = '${globex}'`,
      ]
    ) {
      const res = await asTenant(sql, acme, (tx) => tx.unsafe(stmt));
      assert.equal(res.count, 0, stmt);
    }
    // vault_remove(): its own tenant only, and never without one.
    const [{ gone }] = await asTenant(
      sql,
      acme,
      (tx) => tx`SELECT vault_remove('bank.user') AS gone`,
    );
    assert.equal(gone, false);
    await assert.rejects(
      asTenant(sql, null, (tx) => tx`SELECT vault_remove('bank.user')`),
      /TENANT_UNSET/,
    );
    // Within its own tenant, a ciphertext moved onto another id does not open (AAD).
    await a.add("other", "generic", "acme-other");
    await asTenant(
      sql,
      acme,
      (tx) =>
        tx`UPDATE vault_secrets SET sealed = (SELECT sealed FROM vault_secrets
          WHERE tenant_id = ${acme} AND id = 'mine') WHERE tenant_id = ${acme} AND id = 'other'`,
    );
    await assert.rejects(a.reveal("other"), code("VAULT_TAMPERED"));
  } finally {
    await sql.end();
  }
  assert.deepEqual(await globexRows(), rowsBefore, "globex's secrets are untouched");
  assert.deepEqual(await globexMeta(), metaBefore, "globex's meta is untouched");
  assert.ok((await g.reveal("bank.user")) === "gina");
});

Deno.test("PgVaultRecords: a planted value is never in the cluster's files (data, WAL, log) in plaintext, nor in any error", async () => {
  const r = shared;
  const tenant = await newTenant();
  const planted = `planted-${crypto.randomUUID()}`;
  const needles = [planted, planted.toUpperCase(), planted.slice(8, 24)];
  const marker = `marker-${crypto.randomUUID()}`;
  const errors: unknown[] = [];
  const expectFailure = async (what: string, work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (err) {
      errors.push(err);
      return;
    }
    assert.fail(`${what} should have failed`);
  };
  {
    // A raw key: the claim is about the value, and a passphrase's scrypt (a CPU-second per
    // open) adds nothing to it (the passphrase path is the rekey and tenant-wall tests').
    const key = randomKey();
    using a = await open(r.a, tenant, key);
    await a.add("planted", "password", planted);
    await a.add("other", "generic", planted.toUpperCase());
    // The control: an id is stored in plaintext, so the search below must find this one.
    await a.add(marker, "generic", `${planted}-marker`);
    using b = await open(r.b, tenant, key);
    assert.ok((await b.reveal("planted")) === planted, "B reveals the planted value");
    await expectFailure("a taken id", () => b.add("planted", "password", planted));
    await expectFailure("a bad id", () => b.add("Bad Id", "password", planted));
    await expectFailure("a bad kind", () => b.add("x", "ssh" as "generic", planted));
    await expectFailure("a wrong key", () => open(r.b, tenant, randomKey()));
    // The database gone while a value is being added.
    await pg.stop();
    try {
      await expectFailure("an add with the server down", () => b.add("late", "password", planted));
      await expectFailure("a reveal with the server down", () => b.reveal("planted"));
    } finally {
      await pg.start();
    }
    assert.ok(code("VAULT_UNREADABLE")(errors.at(-1)));
    assert.ok((await b.reveal("other")) === planted.toUpperCase(), "the pool reconnected");
  }
  assert.equal(errors.length, 6);
  for (const err of errors) {
    const text = errorText(err);
    for (const n of needles) assert.ok(!text.includes(n), "an error carries the planted value");
  }
  // Everything the server wrote: flushed, then every file of the cluster searched.
  const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
  let dataDir: string;
  try {
    await su`CHECKPOINT`;
    await su`SELECT pg_switch_wal()`;
    [{ data_directory: dataDir }] = await su<{ data_directory: string }[]>`SHOW data_directory`;
  } finally {
    await su.end();
  }
  const cluster = join(dataDir, "..");
  const bytes = needles.map((n) => Buffer.from(n, "utf8"));
  const control = Buffer.from(marker, "utf8");
  let files = 0;
  let controls = 0;
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) await walk(path);
      else if (e.isFile) {
        const content = Buffer.from(await Deno.readFile(path));
        files++;
        for (const b of bytes) assert.equal(content.indexOf(b), -1, `${path} holds the value`);
        if (content.indexOf(control) !== -1) controls++;
      }
    }
  };
  await walk(cluster);
  assert.ok(files > 100, `only ${files} files searched`);
  assert.ok(controls > 0, "the search found the stored id it should find");
});

Deno.test(clusterTeardown("PgVaultRecords tests", pg, owner, shared.a, shared.b));
