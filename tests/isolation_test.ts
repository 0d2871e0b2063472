/**
 * Each browser in its own network namespace, under its own user, with Chromium's sandbox on
 * (runtime/isolation/): real Chromium, real namespaces, loopback only. Skipped where this
 * machine gives no namespace (the runtime then says why and runs as before).
 *
 * @module
 */
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { join } from "node:path";
import { descendants, type Proc, processes } from "./helpers/processes.ts";
import { eventually, type Harness, startHarness, startTestRuntime } from "./helpers/harness.ts";
import { serveFixtureSite } from "./fixtures/site.ts";
import { detectIsolation, type IsolationFact, sandboxCommand } from "../runtime/isolation/mod.ts";
import { agentTransport, TestClient } from "./helpers/harness.ts";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";

const fact = await detectIsolation();
const ignore = fact.kind !== "netns";
if (ignore) console.error(`isolation tests skipped: ${fact.reason}`);

async function profileDirs(dataDir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const inst of Deno.readDir(join(dataDir, "profiles"))) {
    if (!inst.isDirectory) continue;
    for await (const s of Deno.readDir(join(dataDir, "profiles", inst.name))) {
      if (s.isDirectory && s.name !== "egress") {
        out.push(join(dataDir, "profiles", inst.name, s.name));
      }
    }
  }
  return out;
}

async function run(cmd: string[]): Promise<{ code: number; out: string; err: string }> {
  const o = await new Deno.Command(cmd[0], { args: cmd.slice(1), stdout: "piped", stderr: "piped" })
    .output();
  const d = new TextDecoder();
  return { code: o.code, out: d.decode(o.stdout), err: d.decode(o.stderr) };
}

/** `p`'s command line as one string (Chromium rewrites a child's into one anyway). */
const cmdOf = (p: Proc) => p.argv.join(" ");

/** The sandbox of `h`'s runtime, as its launcher builds it, running `program` as the browser. */
function inSandbox(f: IsolationFact, h: Harness, profileDir: string, program: string[]): string[] {
  return [...sandboxCommand(f, { profileDir, dataDir: h.dataDir }), ...program];
}

/**
 * Cases (e), (a), (c) and (d) share one runtime and one session's browser: each reads that
 * browser from outside (its proxy, its namespace, its processes, its profile) and none changes
 * it, so one launch proves all four; each is a step of its own and fails on its own. The
 * session's profile is read before (e) opens a second session (whose profile it is not).
 */
Deno.test({
  name:
    "isolation: one session's browser, seen through its proxy, namespace, processes and profile",
  ignore,
  async fn(t) {
    await using h = await startHarness();
    await using c = await h.connect("http");
    const r = await c.call("browser_navigate", { url: `${h.site.origin}/` });
    const [profileDir] = await profileDirs(h.dataDir);

    await t.step(
      "isolation: a navigation works through the forwarder and the proxy's socket (e)",
      async () => {
        assert.equal(h.runtime.isolation.kind, "netns");
        assert.equal(r.isError, false, r.text);
        assert.match(r.text, /Fixture home/);
        assert.ok(h.site.hits.includes("GET /"), "the page was fetched (through the proxy)");
        // A second session's browser has its own namespace and listener, and works as well.
        await using d = await h.connect("sse");
        const again = await d.call("browser_navigate", { url: `${h.site.otherOrigin}/` });
        assert.equal(again.isError, false, again.text);
        // What the policy refuses is still refused.
        const away = await c.call("browser_navigate", { url: "http://127.0.0.3:9/" });
        assert.match(away.text, /^denied: ORIGIN_NOT_ALLOWED/);
        // The audit says what this start's browsers get, and each browser's start says it again.
        const rows = await h.runtime.audit.rows();
        assert.ok(rows.some((r) => r.kind === "browser_isolation" && r.reason === "netns"));
        const started = rows.filter((r) => r.kind === "browser_started");
        assert.equal(started.length, 2);
        assert.ok(started.every((r) => r.reason === "netns"), JSON.stringify(started));
      },
    );

    await t.step({
      name:
        "isolation: inside a session's namespace TCP, UDP, DNS and the runtime's port all fail (a)",
      async fn() {
        // Services of the host: TCP on 127.0.0.2, UDP on 127.0.0.2, the runtime's own port.
        const tcp = Deno.listen({ hostname: "127.0.0.2", port: 0 });
        let tcpHits = 0;
        (async () => {
          for await (const conn of tcp) {
            tcpHits++;
            conn.close();
          }
        })().catch(() => {});
        const udp = createSocket("udp4");
        let udpHits = 0;
        udp.on("message", () => udpHits++);
        await new Promise<void>((resolve) => udp.bind(0, "127.0.0.2", resolve));
        const tcpPort = (tcp.addr as Deno.NetAddr).port;
        const udpPort = udp.address().port;
        const runtimePort = new URL(h.runtime.url!).port;
        const sitePort = new URL(h.site.origin).port;
        // A control from the host: the same probes reach these services from outside.
        const probe = `
t() { if timeout 3 "$@" >/dev/null 2>&1; then echo ok; else echo fail; fi; }
echo "tcp_host=$(t bash -c 'exec 5<>/dev/tcp/127.0.0.2/${tcpPort}')"
echo "tcp_site=$(t bash -c 'exec 5<>/dev/tcp/127.0.0.1/${sitePort}')"
echo "tcp_runtime=$(t bash -c 'exec 5<>/dev/tcp/127.0.0.1/${runtimePort}')"
echo "udp_out=$(t bash -c 'echo x >/dev/udp/192.0.2.1/53')"
for i in 1 2 3; do bash -c 'echo x >/dev/udp/127.0.0.2/${udpPort}' 2>/dev/null; done
echo "dns=$(t getent ahosts example.com)"
echo "uid=$(id -u)"
echo "links=$(ip -o link | awk -F': ' '{print $2}' | tr '\\n' ' ')"
echo "datadir=$(if [ -e '${h.dataDir}/omotai.db' ]; then echo visible; else echo hidden; fi)"
`;
        const control = await run(["bash", "-c", probe]);
        assert.match(control.out, /tcp_host=ok/, control.out);
        assert.match(control.out, /tcp_runtime=ok/, control.out);
        assert.match(control.out, /datadir=visible/, control.out);
        assert.ok(await eventually(() => udpHits > 0), "the control's datagrams reached the host");
        const before = { tcpHits, udpHits };
        tcpHits = 0;
        udpHits = 0;
        const inside = await run(
          inSandbox(h.runtime.isolation, h, profileDir, ["bash", "-c", probe]),
        );
        await new Promise((r) => setTimeout(r, 300));
        tcp.close();
        await new Promise<void>((resolve) => udp.close(() => resolve()));
        const out = inside.out;
        assert.match(out, /tcp_host=fail/, out);
        assert.match(out, /tcp_site=fail/, out);
        assert.match(out, /tcp_runtime=fail/, out);
        assert.match(out, /udp_out=fail/, out);
        assert.match(out, /dns=fail/, out);
        assert.match(out, /links=lo $/m, out);
        assert.match(out, /datadir=hidden/, out);
        if (h.runtime.isolation.user) {
          assert.match(out, new RegExp(`uid=${h.runtime.isolation.user.uid}`));
        }
        assert.equal(tcpHits, 0, "no TCP connection reached the host from inside");
        assert.equal(udpHits, 0, "no datagram reached the host from inside");
        assert.ok(before.tcpHits > 0, "the control reached the host's TCP listener");
      },
    });

    await t.step({
      name: "isolation: renderers run sandboxed (seccomp) as the browser user; no --no-sandbox (c)",
      ignore: fact.user === undefined,
      async fn() {
        const all = processes();
        const browsers = all.filter((p) =>
          // bubblewrap's own command line holds the browser's too: the browser is what it runs.
          cmdOf(p).includes(`--user-data-dir=${profileDir}`) && !cmdOf(p).includes("--type=") &&
          !cmdOf(p).startsWith(fact.tools!.bwrap)
        );
        assert.equal(browsers.length, 1, "one browser process for the session");
        const [browser] = browsers;
        assert.equal(browser.uid, fact.user!.uid, "the browser runs as the browser user");
        // Read again until every renderer has had the moment a fresh fork takes to turn its
        // filter on (a loaded machine may fork a spare one just now).
        let renderers: typeof all = [];
        await eventually(() => {
          renderers = descendants(browser.pid, processes()).filter((p) =>
            cmdOf(p).includes("--type=renderer")
          );
          return renderers.length > 0 && renderers.every((r) => r.seccomp === 2);
        });
        assert.ok(renderers.length > 0, "renderers are found below the browser");
        for (const r of renderers) {
          assert.equal(r.seccomp, 2, `renderer ${r.pid} is under a seccomp filter`);
          assert.equal(r.uid, fact.user!.uid, `renderer ${r.pid} runs as the browser user`);
        }
        for (const p of [browser, ...descendants(browser.pid, processes())]) {
          assert.ok(!cmdOf(p).includes("--no-sandbox"), `no --no-sandbox: ${cmdOf(p)}`);
        }
      },
    });

    await t.step({
      name: "isolation: the profile is the browser user's, 0700, unreadable to another user (d)",
      ignore: fact.user === undefined,
      async fn() {
        const st = await Deno.stat(profileDir);
        assert.equal(st.mode! & 0o777, 0o700);
        assert.equal(st.uid, fact.user!.uid);
        const as = (uid: number, gid: number, cmd: string[]) =>
          run(["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", ...cmd]);
        // nobody: another unprivileged user.
        const list = await as(65534, 65534, ["ls", profileDir]);
        assert.notEqual(list.code, 0, "another user cannot list the profile");
        const prefs = await as(65534, 65534, ["cat", join(profileDir, "Default", "Preferences")]);
        assert.notEqual(prefs.code, 0, "another user cannot read the profile's files");
        // The browser's own user cannot read the data dir (database, vault, CA key).
        const db = await as(fact.user!.uid, fact.user!.gid, ["cat", join(h.dataDir, "omotai.db")]);
        assert.notEqual(db.code, 0, "the browser user cannot read the database");
        const ca = await as(fact.user!.uid, fact.user!.gid, ["ls", join(h.dataDir, "proxy-ca")]);
        assert.notEqual(ca.code, 0, "the browser user cannot read the proxy's CA key");
      },
    });
  },
});

Deno.test({
  name: "isolation: a browser that ignores its proxy reaches nothing (b)",
  ignore,
  async fn() {
    const site = serveFixtureSite();
    const dataDir = await Deno.makeTempDir({ prefix: "omotai-test-" });
    try {
      let stripped = 0;
      const runtime = await startTestRuntime(dataDir, `allowed_origins: [${site.origin}]\n`, {
        isolation: {
          testArgs: (args) => {
            const kept = args.filter((a) => !a.startsWith("--proxy-server="));
            stripped += args.length - kept.length;
            return kept;
          },
        },
      });
      try {
        const client = new Client({ name: "omotai-test", version: "0" });
        await client.connect(await agentTransport(runtime, "http"));
        await using c = new TestClient(client);
        const r = await c.call("browser_navigate", { url: `${site.origin}/` });
        assert.equal(stripped, 1, "the launch hook removed --proxy-server");
        assert.doesNotMatch(r.text, /Fixture home/);
        const other = await c.call("browser_navigate", { url: `${site.otherOrigin}/` });
        assert.doesNotMatch(other.text, /Fixture home/);
        assert.deepEqual(site.hits, [], "the host's page server saw no request");
      } finally {
        await runtime[Symbol.asyncDispose]();
      }
    } finally {
      await site[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test("isolation: require_isolation refuses a start, and an agent's session, without a namespace", async () => {
  const dir = await Deno.makeTempDir({ prefix: "omotai-require-" });
  try {
    // The runtime's own policy: no start at all.
    await assert.rejects(
      () =>
        startTestRuntime(dir, "allowed_origins: [http://127.0.0.1:1]\nrequire_isolation: true\n", {
          isolation: { mode: "off" },
        }),
      (err: Error & { code?: string }) =>
        err.code === "ISOLATION_UNAVAILABLE" && /isolation turned off/.test(err.message),
    );
    // An agent's policy: its sessions are refused, the runtime and other agents go on.
    const agentPolicy = `${dir}/agent.yaml`;
    await Deno.writeTextFile(
      agentPolicy,
      "allowed_origins: [http://127.0.0.1:1]\nrequire_isolation: true\n",
    );
    await using runtime = await startTestRuntime(dir, "allowed_origins: [http://127.0.0.1:1]\n", {
      isolation: { mode: "off" },
    });
    assert.equal(runtime.isolation.kind, "none");
    const { key } = await runtime.agents.add("strict", agentPolicy);
    const res = await fetch(`${runtime.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "t", version: "0" },
        },
      }),
    });
    assert.equal(res.status, 503);
    assert.match(await res.text(), /^ISOLATION_UNAVAILABLE: /);
    // The refused start was audited too (same data dir), before it ended.
    const refused = (await runtime.audit.rows()).filter((r) => r.kind === "session_refused");
    assert.deepEqual(refused.map((r) => [r.agent, r.reason]), [
      [null, "ISOLATION_UNAVAILABLE"],
      ["strict", "ISOLATION_UNAVAILABLE"],
    ]);
    assert.ok(
      (await runtime.audit.rows()).some((r) =>
        r.kind === "browser_isolation" && r.reason === "none"
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test({
  name:
    "isolation: run by a normal user, the sandbox needs no uid switch and Chromium keeps its sandbox",
  // Played here by the browser's user itself: a root test process starts the sandbox as it.
  ignore: ignore || fact.user === undefined,
  async fn() {
    const user = fact.user!;
    // What detection gives a non-root runtime: the namespace, no user to switch to.
    const asUser: IsolationFact = { ...fact, user: undefined, sandbox: true, reason: undefined };
    const profileDir = await Deno.makeTempDir({ prefix: "omotai-user-" });
    await Deno.chown(profileDir, user.uid, user.gid);
    const command = [
      "setpriv",
      `--reuid=${user.uid}`,
      `--regid=${user.gid}`,
      "--clear-groups",
      ...sandboxCommand(asUser, { profileDir }),
      "/usr/bin/chromium",
      "--headless",
      `--user-data-dir=${profileDir}`,
      "data:text/html,<p>a page that stays open</p>",
    ];
    assert.ok(!command.includes("--no-sandbox"));
    assert.ok(!command.some((a) => a.startsWith("--reuid=") && a !== `--reuid=${user.uid}`));
    const child = new Deno.Command(command[0], {
      args: command.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const renderers = () =>
        descendants(child.pid).filter((p) => cmdOf(p).includes("--type=renderer"));
      assert.ok(await eventually(() => renderers().length > 0), "a renderer started");
      // A renderer just forked from the zygote turns its filter on a moment later (and a
      // loaded machine may fork a spare one meanwhile): the renderers are judged as one
      // reading in which every one of them has had that moment.
      let seen = renderers();
      await eventually(() => {
        seen = renderers();
        return seen.length > 0 && seen.every((r) => r.seccomp === 2);
      });
      for (const r of seen) {
        assert.equal(r.uid, user.uid, "the renderer runs as the unprivileged user");
        assert.equal(r.seccomp, 2, "the renderer is under seccomp-bpf (Chromium's sandbox)");
      }
    } finally {
      child.kill("SIGKILL");
      await child.status;
      await Deno.remove(profileDir, { recursive: true }).catch(() => {});
    }
  },
});
