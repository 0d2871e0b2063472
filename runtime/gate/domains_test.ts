import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openDatabase } from "../store/database.ts";
import { DomainRules } from "./domains.ts";

Deno.test("DomainRules.add() normalizes origins and replaces an earlier rule", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/o.db`);
  try {
    const rules = new DomainRules(db);
    assert.equal(rules.add("HTTP://Portal.TEST:80/x", "allow"), "http://portal.test");
    rules.add("http://portal.test", "deny");
    assert.deepEqual(rules.list().map((r) => [r.origin, r.rule]), [["http://portal.test", "deny"]]);
    assert.throws(() => rules.add("javascript:alert(1)", "allow"), /BAD_ORIGIN|not an http/);
    assert.equal(rules.remove("http://PORTAL.test:80"), true);
    assert.equal(rules.remove("http://portal.test"), false);
  } finally {
    db.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DomainRules.current() sees another connection's change at once", async () => {
  const dir = await Deno.makeTempDir();
  const runtimeDb = openDatabase(`${dir}/o.db`);
  const cliDb = openDatabase(`${dir}/o.db`);
  try {
    const runtime = new DomainRules(runtimeDb);
    const first = runtime.current();
    assert.equal(first.allow.size, 0);
    assert.equal(runtime.current(), first, "no change, no reread");
    new DomainRules(cliDb).add("https://a.test", "allow");
    const second = runtime.current();
    assert.ok(second.allow.has("https://a.test"));
    assert.ok(second.generation > first.generation);
    new DomainRules(cliDb).add("https://a.test", "deny");
    assert.ok(runtime.current().deny.has("https://a.test"));
    assert.ok(!runtime.current().allow.has("https://a.test"));
  } finally {
    runtimeDb.close();
    cliDb.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("DomainRules.current() throws DOMAINS_UNREADABLE when the table is gone", async () => {
  const dir = await Deno.makeTempDir();
  const db = openDatabase(`${dir}/o.db`);
  const other = new DatabaseSync(`${dir}/o.db`);
  try {
    const rules = new DomainRules(db);
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
