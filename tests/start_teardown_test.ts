/**
 * A start that fails at any step leaves nothing behind: no process (the egress proxy child),
 * no open database, no profile directory, no TLS authority on disk, no listening port.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type StartOptions, startRuntime } from "../runtime/cli/start.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { detectIsolation, openBrowserGroups } from "../runtime/isolation/mod.ts";
import { keySourceFrom, Vault } from "../vault/mod.ts";
import { alive } from "./helpers/processes.ts";

const BROWSER = Deno.env.get("OMOTAI_BROWSER") ?? "/usr/bin/chromium";

/** Files of `dir` this process holds open (Linux `/proc/self/fd`). */
function openFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync("/proc/self/fd")) {
    try {
      const target = Deno.readLinkSync(`/proc/self/fd/${entry.name}`);
      if (target.startsWith(dir)) out.push(target);
    } catch { /* closed meanwhile */ }
  }
  return out;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Asserts that nothing of a start in `dataDir` is left (`pids`: its children seen). */
/** Whether this machine gives browsers a namespace: a start then makes the proxy's socket dir. */
const ISOLATED = (await detectIsolation()).kind === "netns";
/** Whether starts here get browser cgroups (a probe instance, removed at once). */
const BOUNDED = await (async () => {
  const probe = await openBrowserGroups({
    instance: `probe-${crypto.randomUUID().slice(0, 8)}`,
    limits: { memoryBytes: 512 * 2 ** 20, pids: 64, cpuWeight: 50 },
    log: () => {},
  });
  await probe.groups?.close();
  return probe.fact.backend !== "none";
})();

async function assertNothingLeft(dataDir: string, pids: number[], port?: number) {
  // Only the start's own children: other test files run beside this one in this process.
  for (const pid of pids) assert.equal(alive(pid), false, `child ${pid} still runs`);
  const real = await Deno.realPath(dataDir);
  assert.deepEqual(openFilesUnder(real), [], "no file of the data dir is open");
  // The last connection's close checkpoints and removes the WAL.
  assert.equal(await exists(`${databasePath(dataDir)}-wal`), false, "the database is closed");
  assert.equal(await exists(`${dataDir}/proxy-ca`), false, "the TLS authority is gone");
  if (await exists(`${dataDir}/profiles`)) {
    const left = [...Deno.readDirSync(`${dataDir}/profiles`)].map((e) => e.name);
    assert.deepEqual(left, [], "no profile directory is left");
  }
  if (await exists(`${dataDir}/egress`)) {
    const left = [...Deno.readDirSync(`${dataDir}/egress`)].map((e) => e.name);
    assert.deepEqual(left, [], "no proxy socket directory is left");
  }
  if (port !== undefined) Deno.listen({ hostname: "127.0.0.1", port }).close();
  // The database opens again and is whole.
  const db = openDatabase(databasePath(dataDir));
  db.close();
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

function options(dataDir: string, more: Partial<StartOptions> = {}): StartOptions {
  return {
    mode: "sse",
    host: "127.0.0.1",
    port: 0,
    dataDir,
    browser: BROWSER,
    vaultKey: {},
    ...more,
  };
}

/** The teardown steps of a whole start (sse, console, demo site), in registration order. */
async function stepsOfAStart(more: Partial<StartOptions>): Promise<string[]> {
  const dataDir = await Deno.makeTempDir();
  try {
    const names: string[] = [];
    const runtime = await startRuntime(
      options(dataDir, { ...more, audit: `${dataDir}/audit.jsonl`, onStep: (n) => names.push(n) }),
    );
    await runtime[Symbol.asyncDispose]();
    await assertNothingLeft(dataDir, []);
    return names;
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
}

const VAULT_KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));

Deno.test("startRuntime(): a start failing at each of its steps leaves no process, open database, profile or port", async () => {
  const demoPort = freePort();
  const more: Partial<StartOptions> = {
    demoSite: true,
    demoPort,
    vaultKey: { key: VAULT_KEY },
  };
  const steps = await stepsOfAStart(more);
  // Registered as made; run in reverse, this is the documented shutdown order (sessions
  // first, then the servers, … the egress proxy, the profile store, the authority, the database).
  assert.deepEqual(steps, [
    "done",
    "database",
    "audit mirror",
    "vault key",
    "audit checkpoints",
    "runtime_stopped row",
    "TLS authority",
    "profile store",
    ...(ISOLATED ? ["proxy sockets"] : []),
    "egress proxy",
    "approval queue",
    "operator questions",
    "policy worlds",
    ...(BOUNDED ? ["browser cgroups"] : []),
    "sessions",
    "live sessions mirror",
    "admission",
    "warm browsers",
    "demo site",
    "http server",
    "http sessions",
    "agent watch",
    "sessions before servers",
  ]);
  // A failure with the warm pool still filling is the one right after it was opened; past
  // that the pool's undoing is the same step, so later failures start without a warm browser
  // (each would launch one only to stop it).
  const warmUntil = steps.indexOf("warm browsers") + 1;
  assert.ok(warmUntil > 0 && warmUntil < steps.length, "a step after the warm pool's");
  for (const [i, step] of steps.entries()) {
    const dataDir = await Deno.makeTempDir();
    try {
      const seen = new Set<number>();
      const injected = new Error(`injected after ${step}`);
      const port = freePort();
      await assert.rejects(
        startRuntime(options(dataDir, {
          ...more,
          ...(i > warmUntil ? { warmBrowsers: 0 } : {}),
          port,
          audit: `${dataDir}/audit.jsonl`,
          // Whatever the start spawned (the proxy, once started) must be gone after it.
          onChild: (pid) => seen.add(pid),
          onStep: (name) => {
            if (name === step) throw injected;
          },
        })),
        (err) => err === injected,
      );
      if (steps.indexOf("egress proxy") <= i) {
        assert.ok(seen.size > 0, `the proxy child ran when ${step} failed`);
      }
      await assertNothingLeft(dataDir, [...seen], port);
      Deno.listen({ hostname: "127.0.0.1", port: demoPort }).close();
    } finally {
      await Deno.remove(dataDir, { recursive: true });
    }
  }
});

Deno.test("startRuntime(): a start whose vault key is wrong closes its database", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    const db = openDatabase(databasePath(dataDir));
    (await Vault.open(db, keySourceFrom({ key: VAULT_KEY }, { key: "K", passphrase: "P" })))
      [Symbol.dispose]();
    db.close();
    await assert.rejects(
      startRuntime(options(dataDir, { vaultKey: { passphrase: "not the key" } })),
      { code: "VAULT_KEY_MISMATCH" },
    );
    await assertNothingLeft(dataDir, []);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("startRuntime(): a start whose TLS authority cannot be written closes its database", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    // A file where the authority's directory goes: it cannot be made.
    await Deno.writeTextFile(`${dataDir}/proxy-ca`, "");
    await assert.rejects(startRuntime(options(dataDir)));
    await assertNothingLeft(dataDir, []);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("startRuntime(): a start whose profile directory cannot be made closes its database and authority", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dataDir}/profiles`, "");
    await assert.rejects(startRuntime(options(dataDir)));
    await Deno.remove(`${dataDir}/profiles`);
    await assertNothingLeft(dataDir, []);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("startRuntime(): a start whose policy cannot be read stops its proxy child and removes its profiles", async () => {
  const dataDir = await Deno.makeTempDir();
  try {
    const seen: number[] = [];
    await assert.rejects(startRuntime(options(dataDir, {
      policy: `${dataDir}/no-such-policy.yaml`,
      onChild: (pid) => seen.push(pid),
    })));
    assert.ok(seen.length > 0, "the proxy child had started");
    await assertNothingLeft(dataDir, seen);
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("startRuntime(): a start whose listen address is taken stops everything it made, and says so in the audit", async () => {
  const dataDir = await Deno.makeTempDir();
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const seen: number[] = [];
    await assert.rejects(
      startRuntime(options(dataDir, {
        port: (taken.addr as Deno.NetAddr).port,
        onChild: (pid) => seen.push(pid),
        // A filling warm pool undone by a failed start is the first test's; none here.
        warmBrowsers: 0,
      })),
      Deno.errors.AddrInUse,
    );
    assert.ok(seen.length > 0, "the proxy child had started");
    await assertNothingLeft(dataDir, seen);
    const db = new DatabaseSync(databasePath(dataDir));
    const kinds = db.prepare("SELECT kind FROM audit ORDER BY seq").all().map((r) => r.kind);
    db.close();
    assert.deepEqual(kinds, ["runtime_started", "browser_isolation", "runtime_stopped"]);
  } finally {
    taken.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
