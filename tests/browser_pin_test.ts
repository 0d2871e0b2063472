/**
 * A pinned browser, through `omotai` as users run it: `--browser-sha256` or the runtime
 * policy's `browser_sha256` naming another build stops the start before any browser runs
 * (`BROWSER_PIN_MISMATCH`, printing the hash to pin, an audit row); the right hash starts and
 * browses; the launcher grants read of the file to hash and no more.
 *
 * @module
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SqliteAgentStore } from "../runtime/store/sqlite_agent_store.ts";
import { findBrowser } from "../cdp/chromium_process.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { keyedTransport, omotaiFlags, TestClient } from "./helpers/harness.ts";
import { runOmotai, spawnServing, withRunsDir } from "./helpers/omotai_cli.ts";
import { processes } from "./helpers/processes.ts";

/** The browser `omotai start` picks here (as the launcher does), and its real file. */
const BROWSER = findBrowser(Deno.env.get("OMOTAI_BROWSER"));
const REAL = Deno.realPathSync(BROWSER);

let hashed: Promise<string> | undefined;

/**
 * `sha256sum`'s hash of the real browser: an implementation other than the runtime's. Hashed
 * once per file (a few hundred MB each time; the file does not change between cases).
 */
function browserHash(): Promise<string> {
  hashed ??= new Deno.Command("sha256sum", { args: [REAL], stdout: "piped" }).output()
    .then((out) => {
      const hash = new TextDecoder().decode(out.stdout).split(/\s/)[0];
      assert.match(hash, /^[0-9a-f]{64}$/, "sha256sum hashed the browser");
      return hash;
    });
  return hashed;
}

const WRONG = "0123456789abcdef".repeat(4);

/** The `browser_pin` rows of a data dir's audit. */
function pinRows(dataDir: string): { decision: string; reason: string }[] {
  const db = new DatabaseSync(databasePath(dataDir), { readOnly: true });
  try {
    return db.prepare("SELECT decision, reason FROM audit WHERE kind = 'browser_pin'").all()
      .map((r) => ({ ...r })) as unknown as { decision: string; reason: string }[];
  } finally {
    db.close();
  }
}

function browsersOf(dataDir: string): number[] {
  return processes().filter((p) => p.argv.some((a) => a.includes(`${dataDir}/profiles/`)))
    .map((p) => p.pid);
}

Deno.test("omotai start --browser-sha256 of another build: refused before any browser runs, BROWSER_PIN_MISMATCH prints the hash to pin, audited", async () => {
  const actual = await browserHash();
  await withRunsDir("test-pin", async (dir) => {
    const run = await runOmotai([
      "start",
      "--mode",
      "sse",
      "--port",
      "0",
      "--data-dir",
      dir,
      "--browser-sha256",
      WRONG,
    ]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /omotai: BROWSER_PIN_MISMATCH: /);
    assert.ok(run.stderr.includes(`has SHA-256 ${actual}`), run.stderr);
    assert.ok(run.stderr.includes(`pin ${actual}`), run.stderr);
    assert.ok(run.stderr.includes(`not ${WRONG} as --browser-sha256 pins`), run.stderr);
    assert.deepEqual(pinRows(dir), [{ decision: "deny", reason: "BROWSER_PIN_MISMATCH" }]);
    assert.deepEqual(browsersOf(dir), []);
    assert.doesNotMatch(run.stderr, /browser pinned/);
    // The variable (the Docker image's) pins the same way, and is named.
    const byEnv = await runOmotai(["start", "--mode", "sse", "--port", "0", "--data-dir", dir], {
      OMOTAI_BROWSER_SHA256: WRONG,
    });
    assert.equal(byEnv.code, 1, byEnv.stderr);
    assert.ok(byEnv.stderr.includes(`as OMOTAI_BROWSER_SHA256 pins; if this build`), byEnv.stderr);
    // A malformed hash is bad input, refused before anything starts.
    const bad = await runOmotai(["start", "--data-dir", dir, "--browser-sha256", "abc"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /BAD_OPTION: --browser-sha256 takes a SHA-256 of 64 hex digits/);
  });
});

Deno.test("omotai start with a policy's browser_sha256 of another build: refused, naming the policy", async () => {
  const actual = await browserHash();
  await withRunsDir("test-pin-policy", async (dir) => {
    const policy = `${dir}/policy.yaml`;
    await Deno.writeTextFile(policy, `allowed_origins: []\nbrowser_sha256: ${WRONG}\n`);
    const run = await runOmotai([
      "start",
      "--mode",
      "sse",
      "--port",
      "0",
      "--data-dir",
      dir,
      "--policy",
      policy,
    ]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /BROWSER_PIN_MISMATCH/);
    assert.ok(run.stderr.includes(`as browser_sha256 of ${policy} pins`), run.stderr);
    assert.ok(run.stderr.includes(`pin ${actual}`), run.stderr);
    assert.deepEqual(pinRows(dir), [{ decision: "deny", reason: "BROWSER_PIN_MISMATCH" }]);
    // A value that is no hash is the policy file's error, with its key.
    await Deno.writeTextFile(policy, "browser_sha256: latest\n");
    const bad = await runOmotai(["start", "--data-dir", dir, "--policy", policy]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /browser_sha256/);
  });
});

Deno.test("omotai start pinned to its browser's hash (flag and policy key): starts, and a session browses", async () => {
  const actual = await browserHash();
  await withRunsDir("test-pin-ok", async (dir) => {
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("<h1>Pinned page</h1>", { headers: { "content-type": "text/html" } }),
    );
    const origin = `http://127.0.0.1:${server.addr.port}`;
    const policy = `${dir}/policy.yaml`;
    await Deno.writeTextFile(
      policy,
      `allowed_origins: [${origin}]\nbrowser_sha256: ${actual.toUpperCase()}\n`,
    );
    const db = openDatabase(databasePath(dir));
    const { key } = await new SqliteAgentStore(db).add("pinned");
    db.close();
    const rt = await spawnServing(
      new Deno.Command(Deno.execPath(), {
        args: [
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
          dir,
          "--policy",
          policy,
          "--browser-sha256",
          actual,
        ],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }),
    );
    try {
      const client = new Client({ name: "browser-pin-test", version: "0" });
      await client.connect(keyedTransport(rt.url, key, "http"));
      const c = new TestClient(client);
      // The launch checks the pin again (the file is the one hashed: no re-hash).
      const r = await c.call("browser_navigate", { url: `${origin}/` });
      assert.equal(r.isError, false, `${r.text}\n${rt.stderr()}`);
      assert.match(r.text, /Pinned page/);
      assert.deepEqual(pinRows(dir), []);
      assert.match(rt.stderr(), /browser pinned: \S+ is the build --browser-sha256 names/);
      rt.child.kill("SIGTERM");
      assert.equal((await rt.child.status).code, 0, rt.stderr());
    } finally {
      try {
        rt.child.kill("SIGKILL");
      } catch { /* gone */ }
      await rt.child.status;
      await server.shutdown();
    }
  });
});

Deno.test("omotai permissions start --browser-sha256: the runtime may read the browser's real file; unpinned it may not", async () => {
  const read = (out: string) => {
    const runtime = out.split("\n").find((l) => l.startsWith("runtime:")) ?? "";
    return /--allow-read=(\S+)/.exec(runtime)?.[1].split(",") ?? [];
  };
  const pinned = await runOmotai(["permissions", "start", "--browser-sha256", WRONG]);
  assert.equal(pinned.code, 0, pinned.stderr);
  assert.ok(read(pinned.stdout).includes(REAL), pinned.stdout);
  const plain = await runOmotai(["permissions", "start"]);
  assert.ok(!read(plain.stdout).includes(REAL), plain.stdout);
});
