/**
 * No client leaves a browser behind: every way a client can leave `omotai start` (stdin
 * closing, SIGTERM, SIGINT, SIGHUP, the same twice, its parent dying, an HTTP client vanishing) ends that
 * session's Chromium, the egress proxy and the profile directory. The runtime runs as a real
 * subprocess with the permissions the launcher gives it (started directly, to watch that
 * process itself, and through the launcher, the `omotai` command); processes are counted in
 * /proc.
 *
 * @module
 */
import assert from "node:assert/strict";
import { type Proc, processes } from "./helpers/processes.ts";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/shared/stdio"
import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
import { CallToolRequestSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { parseStartOptions } from "../runtime/cli/cli.ts";
import { serveUntilStopped } from "../runtime/cli/shutdown.ts";
import { OmotaiError } from "../runtime/errors.ts";
import { allowedHostsFor } from "../runtime/mcp/host_guard.ts";
import { createHttpApp } from "../runtime/mcp/http_app.ts";
import {
  ANSWER_BOUND_MS,
  eventually,
  keyedTransport,
  omotaiFlags,
  runtimeCommand,
  TestClient,
} from "./helpers/harness.ts";
import { spawnServing } from "./helpers/omotai_cli.ts";
import { SqliteAgentStore } from "../runtime/store/sqlite_agent_store.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";

/**
 * How long a way of leaving may take until everything is gone: the outcome is that nothing is
 * left, and a loaded machine's teardown takes many times a quiet one's (`report()` prints it;
 * bench/scale_bench.ts counts what is left 2 s after sessions end).
 */
const CLEANUP_MS = ANSWER_BOUND_MS;

/** The runtime of `dataDir`, its egress proxy, its Chromiums and all their children. */
function runtimeTree(dataDir: string): Proc[] {
  const all = processes();
  const roots = all.filter((p) =>
    // A Chromium re-parented after its runtime died still names the data dir.
    p.argv.some((a) => a.startsWith(`--user-data-dir=${dataDir}/profiles/`)) ||
    (p.argv[0] === Deno.execPath() && isRuntime(p) && p.argv.includes(dataDir))
  );
  const tree = new Map(roots.map((p) => [p.pid, p]));
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!tree.has(p.pid) && tree.has(p.ppid)) {
        tree.set(p.pid, p);
        grew = true;
      }
    }
  }
  return [...tree.values()];
}

/** The runtime's process, or the launcher (`runtime/main.ts`) that started it. */
function isRuntime(p: Proc): boolean {
  return p.argv.some((a) => a === "runtime/main.ts" || a.endsWith("/runtime/cli/main.ts"));
}

function isChromium(p: Proc): boolean {
  return p.argv.some((a) => a.startsWith("--user-data-dir="));
}

function isProxy(p: Proc): boolean {
  return p.argv.some((a) => a.endsWith("proxy_main.ts"));
}

/** Those of `procs` that still run (same pid, same command line, not a zombie). */
function anyAlive(procs: Proc[]): Proc[] {
  // Only these pids are read, not all of /proc: this is polled until a teardown ends.
  return procs.filter((p) => {
    try {
      if (/^State:\s*Z/m.test(Deno.readTextFileSync(`/proc/${p.pid}/status`))) return false;
      const argv = Deno.readTextFileSync(`/proc/${p.pid}/cmdline`).split("\0");
      return argv.filter((a) => a !== "").join(" ") === p.argv.join(" ");
    } catch {
      return false; // gone
    }
  });
}

/** Entries below `<dataDir>/profiles`, recursively, except heartbeats. */
async function profileEntries(dataDir: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number) => {
    for await (const e of Deno.readDir(dir)) {
      if (e.name === ".heartbeat") continue;
      found.push(`${dir}/${e.name}`);
      if (e.isDirectory && depth < 2) await walk(`${dir}/${e.name}`, depth + 1);
    }
  };
  await walk(`${dataDir}/profiles`, 0).catch(() => {});
  return found;
}

/** Session profile directories (`<instance>/s…`) of `dataDir`. */
async function sessionProfiles(dataDir: string): Promise<string[]> {
  return (await profileEntries(dataDir)).filter((p) => /\/profiles\/i[^/]+\/s[^/]+$/.test(p));
}

/**
 * An MCP client transport over a child's stdin/stdout that, unlike the SDK's, never kills
 * the child: closing it only closes stdin, as a client that simply goes away does.
 */
class PipeClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #stdout: ReadableStream<Uint8Array>;

  constructor(stdin: WritableStream<Uint8Array>, stdout: ReadableStream<Uint8Array>) {
    this.#stdin = stdin.getWriter();
    this.#stdout = stdout;
  }

  start(): Promise<void> {
    (async () => {
      let buffered = "";
      for await (const chunk of this.#stdout.pipeThrough(new TextDecoderStream())) {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim()) this.onmessage?.(deserializeMessage(line));
        }
      }
    })().catch((err) => this.onerror?.(err as Error)).finally(() => this.onclose?.());
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    await this.#stdin.write(new TextEncoder().encode(serializeMessage(message)));
  }

  async close(): Promise<void> {
    await this.#stdin.close().catch(() => {});
  }
}

/** A page to browse and a data dir with a policy allowing it. */
interface Fixture extends AsyncDisposable {
  dataDir: string;
  policyFile: string;
  pageUrl: string;
}

async function fixture(): Promise<Fixture> {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      new Response("<!doctype html><title>Lifecycle</title><h1>Lifecycle page</h1>", {
        headers: { "content-type": "text/html" },
      }),
  );
  const origin = `http://127.0.0.1:${server.addr.port}`;
  // Under runs/ (git-ignored); the launcher grants whatever --data-dir names.
  const dataDir = `runs/test-life-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(dataDir, { recursive: true });
  const policyFile = `${dataDir}/policy.yaml`;
  await Deno.writeTextFile(policyFile, `allowed_origins: [${origin}]\n`);
  return {
    dataDir,
    policyFile,
    pageUrl: `${origin}/`,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** A runtime subprocess in stdio mode with a connected client. */
interface StdioRuntime {
  dataDir: string;
  /** The spawned process: the runtime, or its intermediate parent. */
  child: Deno.ChildProcess;
  transport: PipeClientTransport;
  client: TestClient;
  stderr: () => string;
}

async function spawnStdio(
  f: Fixture,
  options: { viaParent?: boolean; viaLauncher?: boolean } = {},
): Promise<StdioRuntime> {
  const omotaiArgs = ["start", "--data-dir", f.dataDir, "--policy", f.policyFile];
  const runtime = runtimeCommand(omotaiArgs);
  const runtimeArgs = options.viaLauncher
    ? ["run", ...await omotaiFlags(), "runtime/main.ts", ...omotaiArgs]
    : runtime.args;
  const command = options.viaParent
    // The parent hands the runtime its stdin explicitly (a background job would get
    // /dev/null), so stdin stays open after the parent dies: only the ppid watch can tell.
    ? new Deno.Command("sh", {
      args: ["-c", 'exec 3<&0; "$@" <&3 3<&- & wait', "sh", Deno.execPath(), ...runtimeArgs],
      env: runtime.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    })
    : new Deno.Command(Deno.execPath(), {
      args: runtimeArgs,
      env: options.viaLauncher ? {} : runtime.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    });
  const child = command.spawn();
  let stderr = "";
  child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stderr += chunk) }),
  ).catch(() => {});
  const transport = new PipeClientTransport(child.stdin, child.stdout);
  const client = new Client({ name: "omotai-lifecycle-test", version: "0" });
  await client.connect(transport);
  return {
    dataDir: f.dataDir,
    child,
    transport,
    client: new TestClient(client),
    stderr: () => stderr,
  };
}

/** Navigates so a browser really starts; returns the runtime's process tree. */
async function browse(c: TestClient, f: Fixture, stderr: () => string): Promise<Proc[]> {
  const r = await c.call("browser_navigate", { url: f.pageUrl });
  assert.equal(r.isError, false, `${r.text}\n${stderr()}`);
  assert.match(r.text, /Lifecycle page/);
  const tree = runtimeTree(f.dataDir);
  // Otherwise the checks after leaving would pass for a browser that never ran.
  assert.ok(tree.some(isChromium), `a Chromium of ${f.dataDir} runs`);
  assert.ok(tree.some(isProxy), "the egress proxy runs");
  assert.equal((await sessionProfiles(f.dataDir)).length, 1, "one session profile");
  return tree;
}

/** Asserts that every process of `tree` is gone within CLEANUP_MS; returns the time taken. */
async function assertAllGone(tree: Proc[], dataDir: string, since: number): Promise<number> {
  const gone = await eventually(() => anyAlive(tree).length === 0, CLEANUP_MS);
  const took = Date.now() - since;
  const left = anyAlive(tree).map((p) => `${p.pid} ${p.argv.slice(0, 2).join(" ")}`);
  assert.ok(gone, `still running after ${took} ms:\n${left.join("\n")}`);
  assert.deepEqual(
    runtimeTree(dataDir).filter(isChromium),
    [],
    "no Chromium names the data dir",
  );
  return took;
}

async function assertNoProfiles(dataDir: string): Promise<void> {
  const ok = await eventually(async () => (await profileEntries(dataDir)).length === 0);
  assert.ok(ok, `profile entries left: ${(await profileEntries(dataDir)).join(", ")}`);
}

async function statusWithin(child: Deno.ChildProcess, ms: number): Promise<Deno.CommandStatus> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) =>
    timer = setTimeout(() => reject(new Error(`no exit within ${ms} ms`)), ms)
  );
  try {
    return await Promise.race([child.status, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function report(way: string, ms: number, what = "everything gone"): void {
  console.log(`  ${way}: ${what} after ${ms} ms`);
}

/** Ends whatever a failed test left running, and the pipes to it. */
async function cleanUp(rt: StdioRuntime): Promise<void> {
  for (const p of runtimeTree(rt.dataDir)) {
    try {
      Deno.kill(p.pid, "SIGKILL");
    } catch { /* gone */ }
  }
  try {
    rt.child.kill("SIGKILL");
  } catch { /* gone */ }
  await rt.transport.close();
  await rt.child.status;
}

/** Starts a stdio runtime, browses, leaves by `leave`, asserts a clean exit with code 0. */
async function leaveStdio(
  way: string,
  leave: (rt: StdioRuntime) => Promise<void>,
  options: { viaLauncher?: boolean } = {},
) {
  await using f = await fixture();
  await leaveStarted(way, f, await spawnStdio(f, options), leave);
}

/** `leaveStdio` on a runtime `rt` of `f` that is started already. */
async function leaveStarted(
  way: string,
  f: Fixture,
  rt: StdioRuntime,
  leave: (rt: StdioRuntime) => Promise<void>,
) {
  try {
    const tree = await browse(rt.client, f, rt.stderr);
    const start = Date.now();
    await leave(rt);
    const status = await statusWithin(rt.child, CLEANUP_MS);
    assert.equal(status.code, 0, rt.stderr());
    report(way, await assertAllGone(tree, f.dataDir, start));
    await assertNoProfiles(f.dataDir);
  } finally {
    await cleanUp(rt);
  }
}

Deno.test("omotai start finishes its cleanup when stdin closes and SIGTERM follows at once", async () => {
  // What many clients do on exit; the signal must not cut the stdin shutdown short.
  await leaveStdio("stdin closed + SIGTERM", async (rt) => {
    await rt.transport.close();
    rt.child.kill("SIGTERM");
  });
});

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
  Deno.test(`omotai start exits and removes its browser on ${signal}`, async () => {
    await leaveStdio(signal, (rt) => Promise.resolve(rt.child.kill(signal)));
  });
}

Deno.test("launch() passes SIGTERM on: the runtime removes its browser, omotai exits 0", async () => {
  await leaveStdio("launcher SIGTERM", (rt) => Promise.resolve(rt.child.kill("SIGTERM")), {
    viaLauncher: true,
  });
});

Deno.test("launch() leaves stdin to the runtime: a client closing it ends everything", async () => {
  await leaveStdio("launcher stdin closed", (rt) => rt.transport.close(), { viaLauncher: true });
});

Deno.test("launch() killed outright: its runtime sees its parent gone and removes its browser", async () => {
  await using f = await fixture();
  const rt = await spawnStdio(f, { viaLauncher: true });
  try {
    const tree = await browse(rt.client, f, rt.stderr);
    const launcher = tree.find((p) => p.pid === rt.child.pid);
    const runtime = tree.find((p) => p.argv.some((a) => a.endsWith("/runtime/cli/main.ts")));
    assert.ok(
      launcher && runtime && runtime.ppid === launcher.pid,
      "the runtime is the launcher's child",
    );
    const start = Date.now();
    rt.child.kill("SIGKILL");
    await rt.child.status;
    report("launcher killed", await assertAllGone(tree, f.dataDir, start));
    assert.match(rt.stderr(), /shutting down: parent process gone/);
    await assertNoProfiles(f.dataDir);
  } finally {
    await cleanUp(rt);
  }
});

Deno.test("omotai start exits and removes its browser when its parent dies with stdin open", async () => {
  await using f = await fixture();
  const rt = await spawnStdio(f, { viaParent: true });
  try {
    const tree = await browse(rt.client, f, rt.stderr);
    const runtime = tree.find(isRuntime);
    assert.ok(runtime && runtime.ppid === rt.child.pid, "the runtime is the shell's child");
    const start = Date.now();
    rt.child.kill("SIGKILL");
    await rt.child.status;
    report("parent killed", await assertAllGone(tree, f.dataDir, start));
    assert.match(rt.stderr(), /shutting down: parent process gone/);
    await assertNoProfiles(f.dataDir);
  } finally {
    await cleanUp(rt);
  }
});

Deno.test("omotai start takes a second signal soon after the first for the same stop: its cleanup runs whole", async () => {
  // The second signal forcing the exit only after the grace period is stop_signals_test's.
  await leaveStdio("SIGTERM twice", async (rt) => {
    rt.child.kill("SIGTERM");
    // Long enough to arrive as a second signal, well inside the grace period.
    await new Promise((r) => setTimeout(r, 30));
    rt.child.kill("SIGTERM");
  });
});

Deno.test("omotai start on SIGTERM with a hung browser exits within its shutdown bound", async () => {
  await using f = await fixture();
  const rt = await spawnStdio(f);
  try {
    const tree = await browse(rt.client, f, rt.stderr);
    const runtimePid = tree.find(isRuntime)!.pid;
    const browser = tree.find((p) => isChromium(p) && p.ppid === runtimePid);
    assert.ok(browser, "the browser's main process is the runtime's child");
    // A stopped browser answers nothing: the polite close and SIGTERM both go unheard.
    Deno.kill(browser.pid, "SIGSTOP");
    const start = Date.now();
    rt.child.kill("SIGTERM");
    const status = await statusWithin(rt.child, CLEANUP_MS);
    report("SIGTERM, browser hung", Date.now() - start, "runtime exited");
    // 0 once the browser's SIGKILL escalation lands, 1 when the bound cut the cleanup short
    // (Deno's node:child_process drops every kill() after a process's first, so today the
    // stopped browser outlives the runtime); either way the runtime itself is gone in time.
    assert.ok(status.code === 0 || status.code === 1, rt.stderr());
    if (status.code === 1) assert.match(rt.stderr(), /SHUTDOWN_TIMEOUT/);
    else {
      await assertAllGone(tree, f.dataDir, start);
      await assertNoProfiles(f.dataDir);
    }
  } finally {
    await cleanUp(rt);
  }
});

Deno.test("omotai start killed hard, then started again in its data dir", async (t) => {
  // The start after a kill is the stdin case's runtime: a start of its own is CPU the sweep
  // need not pay. Each step reports apart, and the stdin case runs whatever the first did.
  await using f = await fixture();
  let next: StdioRuntime | undefined;
  await t.step("Chromium exits by itself, the next start sweeps the profile", async () => {
    const rt = await spawnStdio(f);
    try {
      const tree = await browse(rt.client, f, rt.stderr);
      const start = Date.now();
      rt.child.kill("SIGKILL");
      await rt.child.status;
      report("SIGKILL (browser exits by itself)", await assertAllGone(tree, f.dataDir, start));
      const [profile] = await sessionProfiles(f.dataDir);
      assert.ok(profile, "a killed runtime cannot remove its profile");
      // Age the dead instance's heartbeat past the staleness limit instead of waiting a minute.
      const instance = profile.slice(0, profile.lastIndexOf("/"));
      const old = new Date(Date.now() - 5 * 60_000);
      await Deno.utime(`${instance}/.heartbeat`, old, old);
      await Deno.utime(instance, old, old);
      next = await spawnStdio(f);
      // The sweep runs before the runtime answers initialize.
      assert.equal(await Deno.stat(instance).catch(() => null), null, "the stale profile is swept");
    } finally {
      if (next) {
        // All of it was gone before the next start, whose processes cleanUp would take too.
        await rt.transport.close();
        await rt.child.status;
      } else await cleanUp(rt);
    }
  });
  await t.step("omotai start exits and removes its browser when stdin closes", async () => {
    if (!next) {
      // The step before failed before its second start: this case starts from nothing.
      for (const e of await profileEntries(f.dataDir)) {
        await Deno.remove(e, { recursive: true }).catch(() => {});
      }
      next = await spawnStdio(f);
    }
    await leaveStarted("stdin closed", f, next, (rt) => rt.transport.close());
  });
});

/** A runtime subprocess in sse mode; resolves once it printed its URL. */
async function spawnSse(f: Fixture, idleSeconds: number) {
  // The MCP door needs an agent key: made in the runtime's database before it starts.
  await Deno.mkdir(f.dataDir, { recursive: true });
  const db = openDatabase(databasePath(f.dataDir));
  const { key } = await new SqliteAgentStore(db).add("lifecycle");
  db.close();
  // The runtime's own process as the launcher starts it (the launcher's part in a stop is
  // the stdio tests' above): what is watched here is the session's browser.
  const command = runtimeCommand([
    "start",
    "--mode",
    "sse",
    "--port",
    "0",
    "--idle-timeout",
    String(idleSeconds),
    // One session's browser at a time and nothing beside it (the pool's refill would be one).
    "--warm-browsers",
    "0",
    "--data-dir",
    f.dataDir,
    "--policy",
    f.policyFile,
  ]);
  const rt = await spawnServing(
    new Deno.Command(Deno.execPath(), {
      args: command.args,
      env: command.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }),
  );
  return { ...rt, key };
}

Deno.test("omotai start --mode sse ends the browser of a client that vanished (Streamable HTTP, then legacy SSE), and goes on serving", async (t) => {
  // One runtime for both kinds: each client's browser and profile must be gone while the
  // runtime (and its proxy) still run, and the second kind starts only once the first's
  // session left nothing.
  await using f = await fixture();
  const rt = await spawnSse(f, 2);
  try {
    let runtime: Proc[] = [];
    for (const kind of ["Streamable HTTP", "legacy SSE"] as const) {
      const ok = await t.step(`${kind}: the vanished client's browser ends`, async () => {
        const client = new Client({ name: "omotai-lifecycle-test", version: "0" });
        await client.connect(
          keyedTransport(rt.url, rt.key, kind === "legacy SSE" ? "sse" : "http"),
        );
        const c = new TestClient(client);
        const runtimeTree = await browse(c, f, rt.stderr);
        const browser = runtimeTree.filter((p) => !isRuntime(p) && !isProxy(p));
        const start = Date.now();
        // Aborts the connections without a DELETE: the server is never told the session ended.
        await client.close();
        report(`${kind} client vanished`, await assertAllGone(browser, f.dataDir, start));
        assert.ok(
          await eventually(async () => (await sessionProfiles(f.dataDir)).length === 0),
          "the session profile is gone",
        );
        runtime = runtimeTree.filter((p) => !browser.includes(p));
        assert.equal(anyAlive(runtime).length, runtime.length, "the runtime still serves");
      });
      assert.ok(ok, `${kind}: failed (the next kind would start on what it left)`);
    }
    rt.child.kill("SIGTERM");
    assert.equal((await statusWithin(rt.child, CLEANUP_MS)).code, 0, rt.stderr());
    assert.equal(anyAlive(runtime).length, 0);
    await assertNoProfiles(f.dataDir);
  } finally {
    try {
      rt.child.kill("SIGKILL");
    } catch { /* already gone */ }
    await rt.child.status;
  }
});

Deno.test("parseStartOptions() reads --idle-timeout in seconds, default 30 minutes", () => {
  assert.equal(parseStartOptions([]).idleTimeoutMs, 30 * 60_000);
  assert.equal(parseStartOptions(["--idle-timeout", "2.5"]).idleTimeoutMs, 2_500);
  for (const bad of ["0", "-1", "soon", ""]) {
    assert.throws(
      () => parseStartOptions([`--idle-timeout=${bad}`]),
      (e: unknown) => e instanceof OmotaiError && e.code === "BAD_OPTION",
      bad,
    );
  }
});

Deno.test("serveUntilStopped() gives up on a cleanup that outlasts its timeout, exit code 1", async () => {
  const started = Date.now();
  const code = await serveUntilStopped({
    done: Promise.resolve(),
    dispose: () => new Promise<void>(() => {}),
    watchParent: false,
    timeoutMs: 100,
  });
  assert.equal(code, 1);
  // Gave up: a cleanup that never ends would hold it forever.
  assert.ok(Date.now() - started < ANSWER_BOUND_MS);
});

Deno.test("createHttpApp() keeps a Streamable HTTP session whose tool call outlasts the idle timeout", async () => {
  const newServer = () => {
    const server = new Server({ name: "slow", version: "0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(CallToolRequestSchema, async () => {
      await new Promise((r) => setTimeout(r, 400));
      return { content: [{ type: "text" as const, text: "slow answer" }] };
    });
    return server;
  };
  const http = createHttpApp({
    allowedHosts: allowedHostsFor("127.0.0.1", 8080),
    newServer,
    idleTimeoutMs: 100,
  });
  const headers: Record<string, string> = {
    host: "127.0.0.1:8080",
    accept: "application/json, text/event-stream",
    "content-type": "application/json",
  };
  const post = async (body: unknown) =>
    await http.app.request("/mcp", { method: "POST", headers, body: JSON.stringify(body) });
  try {
    const init = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "lifecycle-test", version: "0" },
      },
    });
    headers["mcp-session-id"] = init.headers.get("mcp-session-id") ?? "";
    headers["mcp-protocol-version"] = "2025-06-18";
    await init.text();
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).body?.cancel();
    const call = await post({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "slow", arguments: {} },
    });
    assert.match(await call.text(), /slow answer/);
    assert.equal(http.connectionCount(), 1, "the session survived its own long call");
    assert.ok(await eventually(() => http.connectionCount() === 0, 2_000), "then idles out");
  } finally {
    await http.closeAll();
  }
});
