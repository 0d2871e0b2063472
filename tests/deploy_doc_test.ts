/**
 * docs/deploy.md run as written, from a fresh PostgreSQL cluster: every `deploy-…` block in
 * the doc's order through `bash -euo pipefail`, with only the placeholders of its "What to
 * substitute" table replaced (loopback addresses, free ports, temp dirs, fresh passwords).
 * The operator's blocks share one shell's variables, as one terminal would; an `each-runtime`
 * block runs once per runtime with that runtime's values; a `service` block runs in the
 * background; a `file=PATH` block is written to PATH.
 *
 * Between the blocks it checks what the doc promises: no runtime login left unbound, and a
 * bound one naming another tenant reads nothing of it; both HAProxy servers UP (`L7OK`), an
 * agent browsing through the balancer, an approval raised on one runtime listed and decided on
 * the other; the database stopped, a new MCP connection answered `503 AUTH_UNAVAILABLE`, and
 * served again once it is back; the runtimes stopped with SIGTERM (what the systemd unit's
 * stop sends), whose checkpoints `omotai audit verify` takes at once. The unit's `ExecStart` is
 * the command the runtimes were started with, and `systemd-analyze verify` passes it where
 * systemd is installed.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { PgAgentStore } from "../runtime/store/pg_agent_store.ts";
import { PgDatabase } from "../runtime/store/pg_database.ts";
import { addTenant } from "../runtime/store/pg_tenants.ts";
import { html, serveTwoOrigins } from "./fixtures/two_origins.ts";
import {
  type DeployBlock,
  deployBlocks,
  placeholders,
  readDeployDoc,
  substitute,
} from "./helpers/deploy_doc.ts";
import { eventually, keyedTransport, refOf, TestClient } from "./helpers/harness.ts";
import { asTenant, clientFaultsTolerated, startPostgres } from "./helpers/postgres.ts";
import { descendants, processes } from "./helpers/processes.ts";

const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));
const decoder = new TextDecoder();

/** A port free on every one of `hosts`. */
function freePort(hosts: string[]): number {
  for (let tries = 0; tries < 50; tries++) {
    const first = Deno.listen({ hostname: hosts[0], port: 0 });
    const port = (first.addr as Deno.NetAddr).port;
    const held = [first];
    try {
      for (const hostname of hosts.slice(1)) held.push(Deno.listen({ hostname, port }));
      return port;
    } catch {
      // Taken on another address: try another.
    } finally {
      for (const l of held) l.close();
    }
  }
  throw new Error(`no port free on ${hosts.join(", ")}`);
}

/** The environment the blocks run in: a login shell's basics, the npm registry's access. */
function shellEnv(): Record<string, string> {
  const env: Record<string, string> = {
    PATH: "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
    HOME: Deno.env.get("HOME") ?? "/root",
    LANG: "C.UTF-8",
  };
  for (
    const name of [
      "SSL_CERT_FILE",
      "SSL_CERT_DIR",
      "NODE_EXTRA_CA_CERTS",
      "DENO_CERT",
      "DENO_TLS_CA_STORE",
      "DENO_DIR",
      "HTTPS_PROXY",
      "HTTP_PROXY",
      "NO_PROXY",
      "https_proxy",
      "http_proxy",
      "no_proxy",
      "NPM_CONFIG_REGISTRY",
      "npm_config_registry",
    ]
  ) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * One operator's shell across blocks: each block runs in `bash -euo pipefail` after the
 * variables the blocks before it set (a file of `declare -p` lines, as one terminal keeps
 * them), from one working directory.
 */
class Shell {
  readonly #cwd: string;
  readonly #state: string;
  readonly #env = shellEnv();
  #baseline: string[] = [];

  constructor(cwd: string) {
    this.#cwd = cwd;
    this.#state = join(cwd, ".shell-state");
  }

  async init(): Promise<void> {
    await Deno.writeTextFile(this.#state, "");
    // The variables a fresh shell has: what a block sets is everything else (and PATH).
    const out = await this.#bash("compgen -v").output();
    this.#baseline = decoder.decode(out.stdout).split("\n").filter((v) => v && v !== "PATH");
  }

  #script(body: string, keep: boolean): string {
    const save = keep
      ? `\n{ for __v in $(compgen -v); do case "$__v" in __*|${
        this.#baseline.join("|")
      }) ;; *) declare -p "$__v" ;; esac; done; } > ${this.#state}.new && mv ${this.#state}.new ${this.#state}\n`
      : "\n";
    return `. ${this.#state}\n${body}${save}`;
  }

  #bash(script: string, piped = true): Deno.Command {
    return new Deno.Command("bash", {
      args: ["-euo", "pipefail", "-c", script],
      cwd: this.#cwd,
      env: this.#env,
      clearEnv: true,
      stdin: "null",
      stdout: piped ? "piped" : "null",
      stderr: piped ? "piped" : "null",
    });
  }

  /** Runs `body` to its end; its output. Throws with both streams when it fails. */
  async run(name: string, body: string, keep = true): Promise<string> {
    const out = await this.#bash(this.#script(body, keep)).output();
    const stdout = decoder.decode(out.stdout);
    const stderr = decoder.decode(out.stderr);
    assert.equal(out.code, 0, `${name} failed (${out.code}):\n${stdout}\n${stderr}`);
    return stdout;
  }

  /** Starts `body` in the background, its output collected. */
  service(body: string): Service {
    const child = this.#bash(this.#script(body, false)).spawn();
    let output = "";
    for (const stream of [child.stdout, child.stderr]) {
      stream.pipeThrough(new TextDecoderStream()).pipeTo(
        new WritableStream({ write: (c) => void (output += c) }),
      ).catch(() => {});
    }
    return { child, output: () => output };
  }
}

/** A block left running. */
interface Service {
  child: Deno.ChildProcess;
  output(): string;
}

/** The process `service` started for its last command: what systemd's stop signals. */
function mainProcess(service: Service, command: RegExp): number | undefined {
  const all = processes();
  const below = (pid: number): number | undefined => {
    const p = all.find((x) => x.pid === pid);
    if (p && command.test(p.argv.join(" "))) return p.pid;
    for (const c of all.filter((x) => x.ppid === pid)) {
      const found = below(c.pid);
      if (found) return found;
    }
    return undefined;
  };
  return below(service.child.pid);
}

/** HAProxy's `show stat` lines of the `runtimes` servers: name, status, last check. */
function serverStates(csv: string): { server: string; status: string; check: string }[] {
  return csv.split("\n").filter((l) => l.startsWith("runtimes,rt")).map((l) => {
    const [, server, status, check] = l.split(",");
    return { server, status, check };
  });
}

Deno.test("docs/deploy.md: every block run as written, with only its placeholders replaced, gives two runtimes behind HAProxy on one PostgreSQL that serve, share approvals, fail closed without the database, and stop with a verifiable audit", async (t) => {
  const doc = await readDeployDoc();
  const blocks = deployBlocks(doc);
  const root = await Deno.makeTempDir({ prefix: "omotai-deploy-doc-" });
  // The temp root stands for `/`: traversable by the browser's user, as `/var/lib` is.
  await Deno.chmod(root, 0o755);
  await using pg = await startPostgres({ roles: false, initdb: true });
  await using site = serveTwoOrigins(() => ({
    "/plain": () =>
      html(`<form method="post" action="/transfer">
        <input name="amount" value="10"><input name="to" value="alice">
        <button type="submit">Pay</button></form>`),
    "/page": () => html("<h1>Just a page</h1>", "Page"),
    "/transfer": () => html("<p>sent</p>", "Sent"),
  }));
  const faults = clientFaultsTolerated();
  const services: Service[] = [];
  const runtimes: Service[] = [];
  const clients: TestClient[] = [];
  try {
    // --- The values of the table's placeholders -------------------------------------------
    const home = join(root, "home", "omotai");
    await Deno.mkdir(home, { recursive: true });
    // The checkout of the release to run, where the doc keeps it.
    await Deno.symlink(CHECKOUT, join(home, "omotai"));
    const rtHosts = ["127.0.0.11", "127.0.0.12"];
    const rtPort = freePort(rtHosts);
    const lbPort = freePort(["127.0.0.1"]);
    const password = () => `pw-${crypto.randomUUID()}`;
    const superPassword = decodeURIComponent(new URL(pg.superUrl).password);
    const [ownerPw, pw1, pw2] = [password(), password(), password()];
    const dirs = (n: number) => ({
      etc: join(root, `rt${n}`, "etc", "omotai"),
      data: join(root, `rt${n}`, "var", "lib", "omotai"),
    });
    for (const n of [1, 2]) {
      await Deno.mkdir(join(root, `rt${n}`, "var", "lib"), { recursive: true });
      await Deno.mkdir(join(root, `rt${n}`, "etc"), { recursive: true });
    }
    const global = new Map<string, string>([
      ["db.internal", "127.0.0.1"],
      ["5432", String(pg.port)],
      ["CHANGE-ME-superuser", superPassword],
      ["CHANGE-ME-owner", ownerPw],
      ["omotai_acme_1", "omotai_acme_1"],
      ["CHANGE-ME-acme-1", pw1],
      ["omotai_acme_2", "omotai_acme_2"],
      ["CHANGE-ME-acme-2", pw2],
      ["10.0.0.11", rtHosts[0]],
      ["10.0.0.12", rtHosts[1]],
      ["8080", String(rtPort)],
      ["10.0.0.10", "127.0.0.1"],
      ["8000", String(lbPort)],
      ["omotai.internal", "127.0.0.1"],
      ["https://app.example.com", site.origin],
      ["/home/omotai", home],
      ["/etc/omotai", dirs(1).etc],
      ["/var/lib/omotai", dirs(1).data],
      ["/etc/haproxy", join(root, "etc", "haproxy")],
      ["/run/haproxy", join(root, "run", "haproxy")],
      ["/srv/omotai-audit", join(root, "srv", "omotai-audit")],
    ]);
    // Runtime 2's machine: its address, login, password and its own two directories.
    const second = new Map(global)
      .set("10.0.0.11", rtHosts[1])
      .set("omotai_acme_1", "omotai_acme_2")
      .set("CHANGE-ME-acme-1", pw2)
      .set("/etc/omotai", dirs(2).etc)
      .set("/var/lib/omotai", dirs(2).data);
    // What Debian's haproxy package makes.
    await Deno.mkdir(join(root, "etc", "haproxy"), { recursive: true });
    await Deno.mkdir(join(root, "run"), { recursive: true });
    await Deno.mkdir(join(root, "srv"), { recursive: true });

    await t.step("the table lists exactly the words the test replaces", () => {
      assert.deepEqual(placeholders(doc).sort(), [...global.keys()].sort());
      const names = blocks.map((b) => b.name);
      assert.equal(new Set(names).size, names.length, "each tag once");
      for (
        const needed of [
          "deploy-install",
          "deploy-roles",
          "deploy-logins",
          "deploy-runtime-start",
          "deploy-systemd",
          "deploy-haproxy",
          "deploy-balancer",
          "deploy-audit",
        ]
      ) assert.ok(names.includes(needed), `the doc has ${needed}`);
    });

    const work = join(root, "operator");
    await Deno.mkdir(work);
    const shell = new Shell(work);
    await shell.init();
    const outputs = new Map<string, string>();
    const env = { token: "", key: "" };
    const runtimeStart = blocks.find((b) => b.name === "deploy-runtime-start")!;

    /** Runs one block as the doc says, on each runtime's machine when it is tagged so. */
    const runBlock = async (block: DeployBlock) => {
      const machines = block.eachRuntime ? [global, second] : [global];
      for (const values of machines) {
        const body = substitute(block.body, values);
        assert.ok(!/CHANGE-ME|\.internal\b|10\.0\.0\./.test(body), `${block.name}: ${body}`);
        if (block.name === "deploy-systemd") return await checkUnit(body, values);
        if (block.file !== undefined) {
          const path = substitute(block.file, values);
          await Deno.writeTextFile(path.startsWith("/") ? path : join(work, path), body);
        } else if (block.service) {
          const s = shell.service(body);
          services.push(s);
          if (block === runtimeStart) runtimes.push(s);
        } else {
          outputs.set(block.name, await shell.run(block.name, body, !block.eachRuntime));
        }
      }
    };

    /** The unit: its ExecStart is the start block's command; systemd accepts the file. */
    const checkUnit = async (unit: string, values: Map<string, string>) => {
      const execStart = /^ExecStart=(\S+) (.*)$/m.exec(unit);
      assert.ok(execStart, "the unit has an ExecStart");
      assert.equal(execStart[1], join(home, ".deno", "bin", "omotai"), "the installed command");
      const started = substitute(runtimeStart.body, values).replaceAll("\\\n", " ")
        .split("\n").map((l) => l.trim()).find((l) => l.startsWith("omotai start "));
      assert.equal(
        `omotai ${execStart[2]}`,
        started,
        "ExecStart runs what deploy-runtime-start runs",
      );
      assert.match(unit, /^KillMode=mixed$/m);
      assert.match(
        unit,
        new RegExp(`^EnvironmentFile=${values.get("/etc/omotai")}/omotai.env$`, "m"),
      );
      const analyze = await new Deno.Command("sh", {
        args: ["-c", "command -v systemd-analyze"],
        stdout: "piped",
      }).output();
      if (!analyze.success) return;
      const file = join(root, "omotai.service");
      // The service's user is the doc's `omotai`, who need not exist on this machine.
      await Deno.writeTextFile(file, unit.replace(/^(User|Group)=omotai$/gm, "$1=root"));
      const verified = await new Deno.Command("systemd-analyze", {
        args: ["verify", "--man=no", file],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const said = decoder.decode(verified.stdout) + decoder.decode(verified.stderr);
      assert.equal(verified.code, 0, `systemd-analyze verify:\n${said}`);
    };

    const until = (name: string) => blocks.findIndex((b) => b.name === name);
    let next = 0;
    /** Runs the blocks up to and including `name`. */
    const runThrough = async (name: string) => {
      const last = until(name);
      assert.ok(last >= next, `${name} comes after what ran`);
      for (; next <= last; next++) await runBlock(blocks[next]);
    };

    await t.step("install, roles, tenant, bound logins and an agent, as written", async () => {
      await runThrough("deploy-agent");
      env.token = outputs.get("deploy-tenant")!.trim().split("\n").at(-1)!;
      env.key = outputs.get("deploy-agent")!.trim().split("\n").at(-1)!;
      assert.match(env.key, /^omk_/);
      assert.match(
        outputs.get("deploy-logins")!,
        /^acme {2}created .* logins: omotai_acme_1, omotai_acme_2$/m,
      );
    });

    const ownerUrl = new URL(pg.superUrl);
    ownerUrl.username = "omotai_owner";
    ownerUrl.password = ownerPw;
    const loginUrl = (role: string, pw: string) => {
      const u = new URL(ownerUrl);
      u.username = role;
      u.password = pw;
      return u.href;
    };

    await t.step(
      "no runtime login is left unbound; a bound one naming another tenant reads and writes nothing of it",
      async () => {
        await using owner = await PgDatabase.open({ url: ownerUrl.href }, "owner");
        await addTenant(owner, "globex");
        await new PgAgentStore(owner, "globex").add("gina");
        const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
        try {
          const unbound = await su`
          SELECT r.rolname FROM pg_roles r
            JOIN pg_auth_members m ON m.member = r.oid
            JOIN pg_roles g ON g.oid = m.roleid AND g.rolname = 'omotai_runtime'
          WHERE r.rolcanlogin AND r.rolname NOT IN (SELECT role FROM tenant_logins)`;
          assert.deepEqual(unbound.map((r) => r.rolname), [], "every runtime login is bound");
        } finally {
          await su.end();
        }
        const rt1 = postgres(loginUrl("omotai_acme_1", pw1), { max: 1, onnotice: () => {} });
        try {
          const seen = await asTenant(rt1, "globex", (tx) => tx`SELECT name FROM agents`);
          assert.deepEqual(seen.map((r) => r.name), [], "globex's agents, named from acme's login");
          const own = await asTenant(rt1, "acme", (tx) => tx`SELECT name FROM agents`);
          assert.deepEqual(own.map((r) => r.name), ["ci-bot"], "its own tenant's");
          await assert.rejects(
            asTenant(
              rt1,
              "globex",
              (tx) =>
                tx`INSERT INTO agents (tenant_id, name, key_hash, policy, created_at)
               VALUES ('globex', 'mallory', ${"0".repeat(64)}, NULL, 'now')`,
            ),
            /row-level security|violates|permission denied/,
          );
        } finally {
          await rt1.end();
        }
      },
    );

    const lb = `http://127.0.0.1:${lbPort}`;
    const bases = rtHosts.map((h) => `http://${h}:${rtPort}`);

    await t.step(
      "two runtimes and HAProxy started as written: both servers UP (L7OK)",
      async () => {
        await runThrough("deploy-balancer");
        for (const [i, base] of bases.entries()) {
          assert.ok(
            await eventually(async () => {
              try {
                const r = await fetch(`${base}/console.css`);
                await r.body?.cancel();
                return r.status === 200;
              } catch {
                return false;
              }
            }, 120_000),
            `runtime ${i + 1} did not serve:\n${runtimes[i]?.output()}`,
          );
        }
        const statusBlock = blocks[until("deploy-balancer-status")];
        let states: ReturnType<typeof serverStates> = [];
        const up = await eventually(async () => {
          try {
            states = serverStates(
              await shell.run(statusBlock.name, substitute(statusBlock.body, global), false),
            );
          } catch {
            return false;
          }
          return states.length === 2 &&
            states.every((s) => s.status === "UP" && s.check === "L7OK");
        }, 30_000);
        assert.ok(up, `HAProxy's servers: ${JSON.stringify(states)}\n${services.at(-1)?.output()}`);
        next = until("deploy-balancer-status") + 1;
        const unauth = await fetch(`${lb}/mcp`, { method: "POST", body: "{}" });
        await unauth.body?.cancel();
        assert.equal(unauth.status, 401, "through the balancer: the runtime's own answer");
      },
    );

    const api = async (base: string, path: string, init: RequestInit = {}) =>
      await fetch(`${base}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${env.token}`, "content-type": "application/json" },
      });
    const json = async <T>(base: string, path: string): Promise<T> => {
      const r = await api(base, path);
      assert.equal(r.status, 200, `${path}: ${r.status}`);
      return await r.json() as T;
    };

    await t.step(
      "an agent browses through HAProxy; its approval, raised on one runtime, is listed and approved on the other",
      async () => {
        const client = new Client({ name: "deploy-doc-test", version: "0" });
        await client.connect(keyedTransport(lb, env.key, "http"));
        const c = new TestClient(client);
        clients.push(c);
        const page = await c.call("browser_navigate", { url: `${site.origin}/plain` });
        assert.ok(!page.isError, page.text);
        let holder = -1;
        for (const [i, base] of bases.entries()) {
          const list = await json<{ agent: string | null; runtime?: string }[]>(
            base,
            "/api/sessions",
          );
          if (list.some((s) => s.agent === "ci-bot" && s.runtime === undefined)) holder = i;
        }
        assert.ok(holder >= 0, "one runtime holds the session");
        const other = bases[1 - holder];
        const click = c.call("browser_click", { ref: refOf(page.text, /button "Pay"/) });
        let pending: { id: string; method: string }[] = [];
        assert.ok(
          await eventually(async () => {
            pending = await json(other, "/api/approvals?state=pending");
            return pending.length === 1;
            // Inside the policy's default 120 s for an unanswered approval, with room to decide it.
          }, 90_000),
          "the other runtime lists the approval",
        );
        assert.equal(pending[0].method, "POST");
        const decided = await api(other, `/api/approvals/${pending[0].id}`, {
          method: "POST",
          body: JSON.stringify({ decision: "approve" }),
        });
        assert.equal(decided.status, 200, await decided.text());
        assert.match((await click).text, /the operator approved the POST form/);
        assert.deepEqual(site.posts.get("/transfer"), ["amount=10&to=alice"], "exactly one POST");
      },
    );

    /** A new MCP connection's first request through the balancer: its status and body. */
    const connectRaw = async () => {
      const r = await fetch(`${lb}/mcp`, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${env.key}`,
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
            clientInfo: { name: "raw", version: "0" },
          },
        }),
      });
      return { status: r.status, body: await r.text() };
    };

    await t.step(
      "the database stopped: a new MCP connection gets 503 AUTH_UNAVAILABLE, as the doc says; back, it is served",
      async () => {
        assert.match(doc, /503` with `\{"error":"AUTH_UNAVAILABLE"\}`/);
        await pg.stop();
        try {
          const down = await connectRaw();
          assert.equal(down.status, 503, down.body);
          assert.deepEqual(JSON.parse(down.body), { error: "AUTH_UNAVAILABLE" });
        } finally {
          await pg.start();
        }
        let last = { status: 0, body: "" };
        assert.ok(
          await eventually(async () => {
            last = await connectRaw();
            return last.status === 200;
          }, 60_000),
          `served again: ${last.status} ${last.body}`,
        );
        const client = new Client({ name: "deploy-doc-test-after", version: "0" });
        await client.connect(keyedTransport(lb, env.key, "http"));
        const c = new TestClient(client);
        clients.push(c);
        let r = { isError: true, text: "" } as { isError?: boolean; text: string };
        assert.ok(
          await eventually(async () => {
            r = await c.call("browser_navigate", { url: `${site.origin}/page` });
            return !r.isError;
          }, 60_000),
          r.text,
        );
      },
    );

    await t.step(
      "the runtimes stopped with SIGTERM exit 0; audit verify takes both runtimes' checkpoints at once",
      async () => {
        for (const c of clients.splice(0)) await c[Symbol.asyncDispose]().catch(() => {});
        for (const rt of runtimes) {
          const pid = mainProcess(rt, /runtime\/main\.ts start /);
          assert.ok(pid, `the omotai process of a runtime:\n${rt.output()}`);
          Deno.kill(pid, "SIGTERM");
        }
        for (const rt of runtimes) assert.equal((await rt.child.status).code, 0, rt.output());
        await runThrough("deploy-audit");
        const verified = outputs.get("deploy-audit")!;
        assert.match(verified, /audit ok: \d+ rows/);
        for (const n of ["10.0.0.11", "10.0.0.12"]) {
          const file = join(
            global.get("/srv/omotai-audit")!,
            global.get(n)!,
            "audit-checkpoints.jsonl",
          );
          assert.match(
            verified,
            new RegExp(`[1-9]\\d* signed checkpoints of tenant acme checked \\(${file}\\)`),
          );
        }
        assert.equal(next, blocks.length, "every block ran");
        for (const secret of [ownerPw, pw1, pw2, superPassword]) {
          for (const s of services) assert.ok(!s.output().includes(secret), "no password printed");
          for (const out of outputs.values()) {
            assert.ok(!out.includes(secret), "no password printed");
          }
        }
      },
    );
  } finally {
    for (const c of clients) await c[Symbol.asyncDispose]().catch(() => {});
    // Whatever a failed step left running: each service's whole tree.
    for (const s of services) {
      for (const p of [...descendants(s.child.pid).reverse(), { pid: s.child.pid }]) {
        try {
          Deno.kill(p.pid, "SIGKILL");
        } catch { /* gone */ }
      }
      await s.child.status;
    }
    faults[Symbol.dispose]();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
