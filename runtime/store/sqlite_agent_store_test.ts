import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openDatabase } from "./database.ts";
import { SqliteAgentStore } from "./sqlite_agent_store.ts";

/** Runs `fn` with a file-backed database in a temporary directory. */
async function withDb(
  fn: (ctx: { db: DatabaseSync; dir: string; path: string }) => void | Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/omotai.db`;
  const db = openDatabase(path);
  try {
    await fn({ db, dir, path });
  } finally {
    if (db.isOpen) db.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const codeIs = (code: string) => (e: unknown) => (e as { code?: string }).code === code;

/** `key` with its last character replaced by another base64url character. */
function lastCharChanged(key: string): string {
  const last = key.at(-1)!;
  return key.slice(0, -1) + (last === "A" ? "B" : "A");
}

Deno.test("SqliteAgentStore.add() returns an omk_ key of 32 random bytes that verify() maps to the agent", async () => {
  await withDb(async ({ db }) => {
    const keys = new SqliteAgentStore(db);
    const a = await keys.add("ci-bot");
    const b = await keys.add("helper_2");
    assert.equal(a.name, "ci-bot");
    for (const { key } of [a, b]) assert.match(key, /^omk_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a.key, b.key);
    const info = await keys.verify(a.key);
    assert.equal(info?.name, "ci-bot");
    assert.equal(info?.policy, undefined);
    assert.ok(!Number.isNaN(Date.parse(info!.createdAt)));
    assert.equal((await keys.verify(b.key))?.name, "helper_2");
  });
});

Deno.test("SqliteAgentStore.verify() refuses a wrong key, including one differing only in its last character", async () => {
  await withDb(async ({ db }) => {
    const keys = new SqliteAgentStore(db);
    const { key } = await keys.add("agent");
    await keys.add("other");
    // Every stored hash is compared even though none matches: the constant-time path.
    assert.equal(await keys.verify(lastCharChanged(key)), undefined);
    assert.equal(await keys.verify(key.slice(0, -1)), undefined);
    assert.equal(await keys.verify(`${key}x`), undefined);
    assert.equal(await keys.verify(""), undefined);
    assert.equal(await keys.verify(key.toUpperCase()), undefined);
    assert.equal((await keys.verify(key))?.name, "agent");
  });
});

Deno.test("SqliteAgentStore.verify() refuses a removed key and keeps the others", async () => {
  await withDb(async ({ db }) => {
    const keys = new SqliteAgentStore(db);
    const gone = await keys.add("gone");
    const kept = await keys.add("kept");
    assert.equal((await keys.verify(gone.key))?.name, "gone");
    assert.equal(await keys.remove("gone"), true);
    assert.equal(await keys.verify(gone.key), undefined);
    assert.equal(await keys.remove("gone"), false);
    assert.equal((await keys.verify(kept.key))?.name, "kept");
    // A name added again gets a new key; the old one stays refused.
    const again = await keys.add("gone");
    assert.notEqual(again.key, gone.key);
    assert.equal(await keys.verify(gone.key), undefined);
    assert.equal((await keys.verify(again.key))?.name, "gone");
  });
});

Deno.test("SqliteAgentStore.add() never writes the key to the database file, only its hash", async () => {
  await withDb(async ({ db, path }) => {
    const keys = new SqliteAgentStore(db);
    const made = [await keys.add("one"), await keys.add("two"), await keys.add("three")];
    const files = async () => {
      const all: Uint8Array[] = [];
      for (const f of [path, `${path}-wal`, `${path}-shm`]) {
        try {
          all.push(await Deno.readFile(f));
        } catch (err) {
          if (!(err instanceof Deno.errors.NotFound)) throw err;
        }
      }
      return all.map((bytes) => new TextDecoder("latin1").decode(bytes)).join("\n");
    };
    const hashOf = async (key: string) =>
      Array.from(
        new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key))),
        (b) => b.toString(16).padStart(2, "0"),
      ).join("");
    // While the WAL holds the rows, and after a close has checkpointed them into the file.
    for (const stage of ["open", "closed"]) {
      if (stage === "closed") db.close();
      const bytes = await files();
      for (const { key } of made) {
        assert.ok(!bytes.includes(key), `${stage}: the key is in the database files`);
        assert.ok(!bytes.includes(key.slice(4)), `${stage}: the key's body is in the files`);
        // The search does find what is stored: the hash.
        assert.ok(bytes.includes(await hashOf(key)), `${stage}: the hash is stored`);
      }
    }
  });
});

Deno.test("SqliteAgentStore.add() validates names and refuses an existing one", async () => {
  await withDb(async ({ db }) => {
    const keys = new SqliteAgentStore(db);
    for (const bad of ["", "A", "-a", "_a", "a b", "a/b", "a.b", "é", "a".repeat(65), "a\n"]) {
      await assert.rejects(keys.add(bad), codeIs("BAD_AGENT_NAME"), JSON.stringify(bad));
    }
    for (const good of ["a", "0", "ci-bot_2", "a".repeat(64)]) await keys.add(good);
    await assert.rejects(keys.add("ci-bot_2"), codeIs("AGENT_EXISTS"));
    await assert.rejects(keys.remove("Bad Name"), codeIs("BAD_AGENT_NAME"));
    assert.equal((await keys.list()).length, 4);
  });
});

Deno.test("SqliteAgentStore.add() takes only an absolute path to a readable file as policy", async () => {
  await withDb(async ({ db, dir }) => {
    const keys = new SqliteAgentStore(db);
    const file = `${dir}/agent.yaml`;
    await Deno.writeTextFile(file, "allowed_origins: [https://example.com]\n");
    await assert.rejects(keys.add("rel", "agent.yaml"), codeIs("BAD_POLICY_PATH"));
    await assert.rejects(keys.add("dir", dir), codeIs("BAD_POLICY_PATH"));
    await assert.rejects(keys.add("missing", `${dir}/nope.yaml`), codeIs("POLICY_UNREADABLE"));
    assert.equal((await keys.list()).length, 0, "a refused add leaves no row");
    const { key } = await keys.add("scoped", file);
    assert.equal((await keys.verify(key))?.policy, file);
  });
});

Deno.test("SqliteAgentStore.list() gives name, policy and creation time, never a key or hash", async () => {
  await withDb(async ({ db }) => {
    const keys = new SqliteAgentStore(db);
    const { key } = await keys.add("b-agent");
    await keys.add("a-agent");
    const list = await keys.list();
    assert.deepEqual(list.map((a) => a.name), ["a-agent", "b-agent"]);
    for (const a of list) assert.deepEqual(Object.keys(a).sort(), ["createdAt", "name"]);
    const text = JSON.stringify(list);
    assert.ok(!text.includes(key) && !text.includes(key.slice(4)));
    assert.ok(!/[0-9a-f]{64}/.test(text), "no hash");
  });
});

Deno.test("SqliteAgentStore.generation() moves when another connection removes a row, not on other writes", async () => {
  await withDb(async ({ db, path }) => {
    const cli = openDatabase(path);
    try {
      const runtime = new SqliteAgentStore(db);
      const { key } = await new SqliteAgentStore(cli).add("worker");
      const g0 = runtime.generation();
      assert.equal((await runtime.verify(key))?.name, "worker");
      assert.equal(runtime.generation(), g0, "no change, same generation");
      // Another table's commit moves data_version but not the agents.
      cli.prepare("INSERT INTO domain_rules VALUES ('https://a.test', 'allow', 'now')").run();
      assert.equal(runtime.generation(), g0);
      assert.equal(await new SqliteAgentStore(cli).remove("worker"), true);
      const g1 = runtime.generation();
      assert.notEqual(g1, g0);
      assert.equal(await runtime.verify(key), undefined, "the removal applies at once");
      assert.deepEqual(await runtime.list(), []);
      // This connection's own writes move it too.
      await runtime.add("local");
      assert.notEqual(runtime.generation(), g1);
    } finally {
      cli.close();
    }
  });
});

Deno.test("SqliteAgentStore.verify() survives a damaged stored hash and fails closed on a dropped table", async () => {
  await withDb(async ({ db, path }) => {
    const raw = new DatabaseSync(path);
    try {
      const keys = new SqliteAgentStore(db);
      const good = await keys.add("good");
      await keys.add("damaged");
      raw.prepare("UPDATE agents SET key_hash = 'zz' WHERE name = 'damaged'").run();
      assert.equal((await keys.verify(good.key))?.name, "good");
      assert.equal(await keys.verify("zz"), undefined);
      raw.exec("DROP TABLE agents");
      await assert.rejects(keys.verify(good.key), codeIs("AGENTS_UNREADABLE"));
      assert.throws(() => keys.generation(), codeIs("AGENTS_UNREADABLE"));
    } finally {
      raw.close();
    }
  });
});
