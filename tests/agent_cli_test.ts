import assert from "node:assert/strict";
import { resolve } from "node:path";
import { SqliteAgentStore } from "../runtime/store/sqlite_agent_store.ts";
import { openDatabase } from "../runtime/store/database.ts";
import { runOmotai, runRuntime, runRuntimeBatch } from "./helpers/omotai_cli.ts";

const decoder = new TextDecoder();

// The first call of each test goes through the `omotai` launcher (runOmotai: the task's
// flags); the rest run the runtime's own process as the launcher starts it (runRuntime),
// which prints and exits alike, for half the processes.

/** A data dir the task may write (its --allow-write is runs/), removed afterwards. */
async function withDataDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = `runs/test-agent-cli-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(dir, { recursive: true });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const count = (text: string, part: string) => text.split(part).length - 1;

Deno.test("omotai agent add prints the key once, alone on the last stdout line; list hides it; rm revokes it", async () => {
  await withDataDir(async (dir) => {
    const add = await runOmotai(["agent", "add", "ci-bot", "--data-dir", dir]);
    assert.equal(add.code, 0, add.stderr);
    const lines = add.stdout.trimEnd().split("\n");
    const key = lines.at(-1)!;
    assert.match(key, /^omk_[A-Za-z0-9_-]{43}$/);
    assert.equal(count(add.stdout + add.stderr, key), 1, "the key is printed once");
    assert.match(add.stderr, /added agent ci-bot/);

    const db = openDatabase(`${dir}/omotai.db`);
    try {
      assert.equal(
        (await new SqliteAgentStore(db).verify(key))?.name,
        "ci-bot",
        "the printed key verifies",
      );
    } finally {
      db.close();
    }
    for (const f of ["omotai.db", "omotai.db-wal"]) {
      const bytes = await Deno.readFile(`${dir}/${f}`).catch(() => new Uint8Array());
      assert.ok(!decoder.decode(bytes).includes(key.slice(4)), `${f} holds the key`);
    }

    // A second agent (`agent add` itself is proven above): the list shows both, and rm takes
    // only the one named.
    const other = openDatabase(`${dir}/omotai.db`);
    try {
      await new SqliteAgentStore(other).add("helper");
    } finally {
      other.close();
    }
    // The list, the rm and the rm again, in order, in one process (runRuntimeBatch): each line
    // as the runtime's own process runs it, its own output and exit code.
    const [list, rm, again] = await runRuntimeBatch([
      ["agent", "list", "--data-dir", dir],
      ["agent", "rm", "ci-bot", "--data-dir", dir],
      ["agent", "rm", "ci-bot", "--data-dir", dir],
    ]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stdout,
      /^ci-bot {2}policy \(runtime --policy\) {2}\(since \d{4}-\d\d-\d\dT/m,
    );
    assert.match(list.stdout, /^helper /m);
    assert.ok(!list.stdout.includes(key.slice(4)) && !list.stdout.includes("omk_"), "no key");
    assert.ok(!/[0-9a-f]{64}/.test(list.stdout), "no hash");

    assert.equal(rm.code, 0, rm.stderr);
    assert.match(rm.stdout, /removed agent ci-bot/);
    assert.equal(again.code, 1);
    assert.match(again.stdout, /no agent ci-bot/);
    // What `agent list` prints (its output is checked above) is the store's list.
    const check = openDatabase(`${dir}/omotai.db`);
    try {
      const store = new SqliteAgentStore(check);
      assert.deepEqual((await store.list()).map((a) => a.name), ["helper"]);
      assert.equal(await store.verify(key), undefined, "the removed key is refused");
    } finally {
      check.close();
    }
  });
});

Deno.test("omotai agent add resolves --policy against the caller's cwd and refuses bad input with codes", async () => {
  await withDataDir(async (dir) => {
    const policy = `${dir}/agent-policy.yaml`;
    await Deno.writeTextFile(policy, "allowed_origins: [https://example.com]\n");
    const add = await runOmotai(["agent", "add", "scoped", "--policy", policy, "--data-dir", dir]);
    assert.equal(add.code, 0, add.stderr);
    const refused: [string[], string][] = [
      [["agent", "add", "Bad Name"], "BAD_AGENT_NAME"],
      [["agent", "add", "scoped"], "AGENT_EXISTS"],
      [["agent", "add", "other", "--policy", `${dir}/missing.yaml`], "POLICY_UNREADABLE"],
      [["agent", "add", "other", "--policy", dir], "BAD_POLICY_PATH"],
    ];
    // The list and the refusals change nothing: they run at once, all but one in one process
    // (runRuntimeBatch, each line its own run); the missing policy's read is granted to its
    // own process.
    const [[list, usage, unknown, ...batched], unreadable] = await Promise.all([
      runRuntimeBatch([
        ["agent", "list", "--data-dir", dir],
        ["agent", "add", "--data-dir", dir],
        ["agent", "frobnicate", "--data-dir", dir],
        ...refused.filter((_, i) => i !== 2).map(([args]) => [...args, "--data-dir", dir]),
      ]),
      runRuntime([...refused[2][0], "--data-dir", dir]),
    ]);
    const runs = [...batched.slice(0, 2), unreadable, ...batched.slice(2)];
    assert.ok(list.stdout.includes(`scoped  policy ${resolve(policy)}  `), list.stdout);
    for (const [i, [args, code]] of refused.entries()) {
      const res = runs[i];
      assert.equal(res.code, 1, `${args.join(" ")}: ${res.stderr}`);
      assert.match(res.stderr, new RegExp(`omotai: ${code}: `));
      assert.equal(res.stdout, "", "no key is printed for a refused add");
    }
    assert.equal(usage.code, 1);
    assert.match(usage.stderr, /BAD_OPTION: agent add takes one name/);
    assert.equal(unknown.code, 2);
  });
});
