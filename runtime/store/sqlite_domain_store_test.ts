import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openDatabase } from "./database.ts";
import { SqliteDomainStore } from "./sqlite_domain_store.ts";

Deno.test("SqliteDomainStore.add() normalizes origins and replaces an earlier rule", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/o.db`);
  try {
    const rules = new SqliteDomainStore(db);
    assert.equal(await rules.add("HTTP://Portal.TEST:80/x", "allow"), "http://portal.test");
    await rules.add("http://portal.test", "deny");
    assert.deepEqual((await rules.list()).map((r) => [r.origin, r.rule]), [[
      "http://portal.test",
      "deny",
    ]]);
    await assert.rejects(rules.add("javascript:alert(1)", "allow"), /BAD_ORIGIN|not an http/);
    assert.equal(await rules.remove("http://PORTAL.test:80"), true);
    assert.equal(await rules.remove("http://portal.test"), false);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SqliteDomainStore.current() sees another connection's change at once", async () => {
  const dir = await Deno.makeTempDir();
  const runtimeDb = openDatabase(`${dir}/o.db`);
  const cliDb = openDatabase(`${dir}/o.db`);
  try {
    const runtime = new SqliteDomainStore(runtimeDb);
    const first = runtime.current();
    assert.equal(first.allow.size, 0);
    assert.equal(runtime.current(), first, "no change, no reread");
    await new SqliteDomainStore(cliDb).add("https://a.test", "allow");
    const second = runtime.current();
    assert.ok(second.allow.has("https://a.test"));
    assert.ok(second.generation > first.generation);
    await new SqliteDomainStore(cliDb).add("https://a.test", "deny");
    assert.ok(runtime.current().deny.has("https://a.test"));
    assert.ok(!runtime.current().allow.has("https://a.test"));
  } finally {
    runtimeDb.close();
    cliDb.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SqliteDomainStore.current() throws DOMAINS_UNREADABLE when the table is gone", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/o.db`);
  const other = new DatabaseSync(`${dir}/o.db`);
  try {
    const rules = new SqliteDomainStore(db);
    rules.current();
    other.exec("DROP TABLE domain_rules");
    assert.throws(
      () => rules.current(),
      (e: Error & { code?: string }) => e.code === "DOMAINS_UNREADABLE",
    );
  } finally {
    db.close();
    other.close();
    await Deno.remove(dir, { recursive: true });
  }
});
