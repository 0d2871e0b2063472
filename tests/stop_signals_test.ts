/**
 * A stop reaches `omotai start` however it is sent and however often within the grace period
 * (launcher/stop_signals.ts): `kill -TERM -PGID` (systemd's default `KillMode`, which signals
 * the launcher and the runtime alike), the same twice, or the launcher alone (`KillMode=mixed`).
 * Each time the ordered teardown runs to its end: the `runtime_stopped` row is the chain's
 * last, the final signed checkpoint covers it (so a rewritten tail is caught by
 * `omotai audit verify --checkpoints`), no browser is left, no socket is left in the data
 * dir. The runtime runs as deployed: `omotai start --mode sse` through the launcher, in a
 * process group of its own (`setsid`). `omotai audit verify` runs as the runtime's own process
 * (`runRuntime`): the launcher in front of it is what the stops here are about, not the check.
 *
 * @module
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SqliteAgentStore } from "../runtime/store/sqlite_agent_store.ts";
import type { AuditRow } from "../runtime/store/audit_row.ts";
import { CHECKPOINT_FILE } from "../runtime/audit/checkpointer.ts";
import { STOP_GRACE_MS } from "../runtime/launcher/stop_signals.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { forgeFrom } from "./helpers/audit_forgery.ts";
import { eventually, keyedTransport, omotaiFlags, TestClient } from "./helpers/harness.ts";
import { runRuntime, type ServingRuntime, spawnServing } from "./helpers/omotai_cli.ts";
import { processes } from "./helpers/processes.ts";

/** Generous: a teardown closes a browser (seconds on a loaded machine) and the audit. */
const EXIT_MS = 30_000;

/** A page to browse, a policy allowing only it, a data dir under runs/ with an agent key. */
async function fixture() {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      new Response("<!doctype html><title>Stop</title><h1>Stop page</h1>", {
        headers: { "content-type": "text/html" },
      }),
  );
  const dataDir = `runs/test-stop-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(dataDir, { recursive: true });
  const policyFile = `${dataDir}/policy.yaml`;
  await Deno.writeTextFile(policyFile, `allowed_origins: [http://127.0.0.1:${server.addr.port}]\n`);
  const db = openDatabase(databasePath(dataDir));
  const { key } = await new SqliteAgentStore(db).add("stopper");
  db.close();
  return {
    dataDir,
    policyFile,
    key,
    pageUrl: `http://127.0.0.1:${server.addr.port}/`,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;

/** `omotai start --mode sse` through the launcher, leading a process group of its own. */
async function startInOwnGroup(f: Fixture): Promise<ServingRuntime> {
  return await spawnServing(
    new Deno.Command("setsid", {
      args: [
        Deno.execPath(),
        "run",
        ...await omotaiFlags(),
        "runtime/main.ts",
        "start",
        "--mode",
        "sse",
        "--port",
        "0",
        "--warm-browsers",
        "0",
        "--data-dir",
        f.dataDir,
        "--policy",
        f.policyFile,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }),
  );
}

/** Browses (a browser starts) and is refused once; returns the chain's rows so far. */
async function writeRows(rt: ServingRuntime, f: Fixture): Promise<void> {
  const client = new Client({ name: "stop-signals-test", version: "0" });
  await client.connect(keyedTransport(rt.url, f.key, "http"));
  const c = new TestClient(client);
  const ok = await c.call("browser_navigate", { url: f.pageUrl });
  assert.equal(ok.isError, false, `${ok.text}\n${rt.stderr()}`);
  const refused = await c.call("browser_navigate", { url: "http://127.0.0.3:9/elsewhere" });
  assert.match(refused.text, /denied|refused|not allowed|blocked/i, refused.text);
  assert.ok(browsersOf(f.dataDir).length > 0, "a browser runs");
  // The client does not leave: the stop must end its session.
}

/** Chromium processes that name the data dir. */
function browsersOf(dataDir: string): number[] {
  return processes().filter((p) => p.argv.some((a) => a.includes(`${dataDir}/profiles/`)))
    .map((p) => p.pid);
}

/** Sockets anywhere below `dir`. */
async function socketsUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string) => {
    for await (const e of Deno.readDir(d)) {
      const path = join(d, e.name);
      const info = await Deno.lstat(path).catch(() => undefined);
      if (info?.isSocket) found.push(path);
      else if (info?.isDirectory) await walk(path);
    }
  };
  await walk(dir);
  return found;
}

async function exitWithin(rt: ServingRuntime, ms: number): Promise<number> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) =>
    timer = setTimeout(() => reject(new Error(`no exit within ${ms} ms\n${rt.stderr()}`)), ms)
  );
  try {
    return (await Promise.race([rt.child.status, timeout])).code;
  } finally {
    clearTimeout(timer);
  }
}

/** The data dir's audit rows, oldest first. */
function auditRows(dataDir: string): AuditRow[] {
  const db = new DatabaseSync(databasePath(dataDir), { readOnly: true });
  try {
    return db.prepare("SELECT * FROM audit ORDER BY seq").all()
      .map((r) => ({ ...r })) as unknown as AuditRow[];
  } finally {
    db.close();
  }
}

/**
 * Asserts the whole teardown ran: exit code 0, `runtime_stopped` last, the last signed
 * checkpoint at the chain's last row (as `omotai audit verify --checkpoints` reports it),
 * no browser, no socket.
 */
async function assertTornDown(rt: ServingRuntime, f: Fixture, code: number): Promise<void> {
  assert.equal(code, 0, rt.stderr());
  assert.doesNotMatch(rt.stderr(), /exiting without waiting for cleanup/);
  const rows = auditRows(f.dataDir);
  assert.equal(rows.at(-1)?.kind, "runtime_stopped", "the stop record is the last row");
  const file = join(f.dataDir, CHECKPOINT_FILE);
  const verified = await runRuntime([
    "audit",
    "verify",
    "--data-dir",
    f.dataDir,
    "--checkpoints",
    file,
  ]);
  assert.equal(verified.code, 0, verified.stdout + verified.stderr);
  const last = Number(/audit ok: \d+ rows \(rows \d+\.\.(\d+)\)/.exec(verified.stdout)?.[1]);
  assert.equal(last, rows.at(-1)!.seq, verified.stdout);
  const signed = (await Deno.readTextFile(file)).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(signed.at(-1).seq, last, "the final checkpoint covers the last row");
  assert.ok(
    await eventually(() => browsersOf(f.dataDir).length === 0),
    `browsers left: ${browsersOf(f.dataDir).join(", ")}`,
  );
  assert.deepEqual(await socketsUnder(f.dataDir), [], "no socket is left in the data dir");
}

/** Kills whatever a failed test left behind. */
function cleanUp(rt: ServingRuntime, f: Fixture): Promise<unknown> {
  for (const pid of browsersOf(f.dataDir)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone */ }
  }
  try {
    Deno.kill(-rt.child.pid, "SIGKILL");
  } catch { /* gone */ }
  return rt.child.status;
}

Deno.test("omotai start: SIGTERM to its process group runs the whole teardown; a tail rewritten afterwards is caught by its final checkpoint", async () => {
  await using f = await fixture();
  const rt = await startInOwnGroup(f);
  try {
    await writeRows(rt, f);
    // What systemd's default KillMode and `kill -TERM -PGID` do: the launcher and the
    // runtime (and every other process of the group) get the signal; the launcher relays it.
    Deno.kill(-rt.child.pid, "SIGTERM");
    // Both copies reach the runtime (it may see one: a signal pending twice is delivered once);
    // either way no copy may cut the teardown short.
    await assertTornDown(rt, f, await exitWithin(rt, EXIT_MS));

    // Whoever holds the database flips the refusal into an allow and re-hashes the tail.
    const rows = auditRows(f.dataDir);
    const deny = rows.findLast((r) => r.decision === "deny");
    assert.ok(deny, "the refused navigation has its row");
    const db = new DatabaseSync(databasePath(f.dataDir));
    db.exec("DROP TRIGGER audit_no_update");
    const update = db.prepare(
      "UPDATE audit SET decision = ?, prev_hash = ?, hash = ? WHERE seq = ?",
    );
    const forged = forgeFrom(rows, deny.seq);
    for (const r of forged) update.run(r.decision, r.prev_hash, r.hash, r.seq);
    db.prepare("UPDATE audit_state SET head_hash = ? WHERE id = 1").run(forged.at(-1)!.hash);
    db.close();
    const plain = await runRuntime(["audit", "verify", "--data-dir", f.dataDir]);
    assert.equal(plain.code, 0, `the chain alone cannot tell: ${plain.stdout}`);
    const caught = await runRuntime([
      "audit",
      "verify",
      "--data-dir",
      f.dataDir,
      "--checkpoints",
      join(f.dataDir, CHECKPOINT_FILE),
    ]);
    assert.equal(caught.code, 1, caught.stdout);
    assert.match(
      caught.stdout,
      new RegExp(
        `row ${rows.at(-1)!.seq} is not the row that was signed; the history was rewritten`,
      ),
    );
  } finally {
    await cleanUp(rt, f);
  }
});

Deno.test("omotai start: SIGTERM twice to its process group within the grace period is one stop, torn down whole", async () => {
  await using f = await fixture();
  const rt = await startInOwnGroup(f);
  try {
    await writeRows(rt, f);
    Deno.kill(-rt.child.pid, "SIGTERM");
    // Apart enough to arrive as two signals (one pending twice is delivered once).
    await new Promise((r) => setTimeout(r, 300));
    try {
      Deno.kill(-rt.child.pid, "SIGTERM");
    } catch { /* the group was already gone: the first stop was quick */ }
    await assertTornDown(rt, f, await exitWithin(rt, EXIT_MS));
  } finally {
    await cleanUp(rt, f);
  }
});

Deno.test("omotai start: SIGTERM to the launcher alone (KillMode=mixed) is relayed once, torn down whole", async () => {
  await using f = await fixture();
  const rt = await startInOwnGroup(f);
  try {
    await writeRows(rt, f);
    rt.child.kill("SIGTERM");
    await assertTornDown(rt, f, await exitWithin(rt, EXIT_MS));
    assert.doesNotMatch(rt.stderr(), /the same stop, ignored/, "one relay, no repeat");
  } finally {
    await cleanUp(rt, f);
  }
});

Deno.test("omotai start: a second SIGTERM to the launcher after the grace period is relayed and forces the exit (143)", async () => {
  await using f = await fixture();
  const rt = await startInOwnGroup(f);
  const runtime = () =>
    processes().find((p) =>
      p.ppid === rt.child.pid && p.argv.some((a) => a.endsWith("/runtime/cli/main.ts"))
    )?.pid;
  try {
    await writeRows(rt, f);
    const pid = runtime();
    assert.ok(pid, "the runtime is the launcher's child");
    // A stopped browser answers nothing: its close, and so the teardown, takes seconds.
    for (const b of browsersOf(f.dataDir)) Deno.kill(b, "SIGSTOP");
    rt.child.kill("SIGTERM");
    assert.ok(
      await eventually(() => /shutting down: SIGTERM/.test(rt.stderr()), EXIT_MS),
      rt.stderr(),
    );
    // The runtime is held mid-teardown (a browser's close waits 2 s before anything else), so
    // the second stop surely finds it still tearing down, however loaded the machine is.
    Deno.kill(pid, "SIGSTOP");
    await new Promise((r) => setTimeout(r, STOP_GRACE_MS + 500));
    rt.child.kill("SIGTERM");
    // The relayed signal waits for the runtime to run again; its clock went on meanwhile.
    await new Promise((r) => setTimeout(r, 200));
    Deno.kill(pid, "SIGCONT");
    assert.equal(await exitWithin(rt, EXIT_MS), 143, rt.stderr());
    assert.match(rt.stderr(), /SIGTERM during shutdown: exiting without waiting for cleanup/);
    assert.doesNotMatch(rt.stderr(), /the same stop, ignored/);
  } finally {
    for (const b of browsersOf(f.dataDir)) {
      try {
        Deno.kill(b, "SIGCONT");
      } catch { /* gone */ }
    }
    await cleanUp(rt, f);
  }
});
