/**
 * docs/deploy.md, followed step by step: a throwaway PostgreSQL with the documented roles (a
 * login per runtime), two tenants, two `omotai start --database … --tenant acme` processes
 * started by the launcher's own permissions, and HAProxy running the documented
 * `deploy-haproxy` block in front of them. An agent's call waits on a confirm raised on the
 * runtime holding its browser; the operator approves it through the OTHER runtime's API; the
 * site receives exactly one POST; both runtimes' rows verify as one chain with every
 * runtime's checkpoints. Around it: another tenant's key opens nothing, a domain rule set on
 * one runtime applies on the other, a kill and an agent removal on one end sessions on the
 * other, and the database stopped mid-session denies and is recovered from without a restart.
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import assert from "node:assert/strict";
import postgres from "postgres";
import { PgAgentStore } from "../runtime/store/pg_agent_store.ts";
import { PgAuditLog } from "../runtime/store/pg_audit_log.ts";
import { PgDatabase } from "../runtime/store/pg_database.ts";
import { ADMIN_REFRESH_MS } from "../runtime/store/pg_admin_token.ts";
import { html, serveTwoOrigins } from "./fixtures/two_origins.ts";
import {
  eventually,
  keyedTransport,
  refOf,
  runtimeCommand,
  TestClient,
} from "./helpers/harness.ts";
import { type ServingRuntime, spawnServing } from "./helpers/omotai_cli.ts";
import { deployBlock, readDeployDoc, substitute } from "./helpers/deploy_doc.ts";
import { clientFaultsTolerated, clusterTeardown, startPostgres } from "./helpers/postgres.ts";
import { processRedactor } from "../runtime/redact/mod.ts";

const pg = await startPostgres();
// The owner's pool is connected when a step stops the server: its known faults pass.
const faults = clientFaultsTolerated();

/** `omotai ARGS` as the launcher runs it; its exit code and what it printed. */
async function omotai(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const command = runtimeCommand(args);
  const r = await new Deno.Command(Deno.execPath(), {
    args: command.args,
    env: command.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: r.code, out: d.decode(r.stdout), err: d.decode(r.stderr) };
}

/** `omotai tenant add ID` as the owner, as docs/deploy.md runs it: the admin token it prints. */
async function tenantAdd(id: string): Promise<string> {
  const r = await omotai(["tenant", "add", id, "--database", pg.ownerUrl]);
  assert.equal(r.code, 0, r.err);
  return r.out.trim().split("\n").at(-1)!;
}

// The first one also migrates the schema.
const ACME_TOKEN = await tenantAdd("acme");
const GLOBEX_TOKEN = await tenantAdd("globex");
const owner = await PgDatabase.open({ url: pg.ownerUrl }, "owner");
let token = ACME_TOKEN;

/**
 * A runtime's own login, as docs/deploy.md makes it: the superuser creates it in
 * `omotai_runtime`, the owner binds it to the tenant (`omotai tenant bind`).
 */
async function runtimeLogin(role: string, tenant: string): Promise<string> {
  const su = postgres(pg.superUrl, { max: 1, onnotice: () => {} });
  try {
    await su.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD 'pw-${role}' IN ROLE omotai_runtime`);
  } finally {
    await su.end();
  }
  const bound = await omotai(["tenant", "bind", tenant, role, "--database", pg.ownerUrl]);
  assert.equal(bound.code, 0, bound.err);
  const url = new URL(pg.appUrl);
  url.username = role;
  url.password = `pw-${role}`;
  return url.href;
}

/** A free loopback port (the balancer's, known before the runtimes start). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** One runtime process of tenant acme, started with the permissions the launcher computes. */
async function spawnRuntime(
  name: string,
  url: string,
  policyFile: string,
  publicHost: string,
): Promise<ServingRuntime & { dataDir: string }> {
  const dataDir = `runs/test-shared-${name}-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(dataDir, { recursive: true });
  const command = runtimeCommand([
    "start",
    "--mode",
    "sse",
    "--port",
    "0",
    "--warm-browsers",
    "0",
    "--isolation",
    "off",
    "--data-dir",
    dataDir,
    "--policy",
    policyFile,
    "--database",
    url,
    "--tenant",
    "acme",
    "--public-host",
    publicHost,
  ]);
  assert.ok(!command.args.some((a) => a.includes("postgres://")), "the URL is not in argv");
  const rt = await spawnServing(
    new Deno.Command(Deno.execPath(), {
      args: command.args,
      env: command.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }),
  );
  return { ...rt, dataDir };
}

/**
 * HAProxy with docs/deploy.md's block: only the placeholders of its table replaced (each
 * runtime's `host:port` is a loopback port of its own here). tests/deploy_doc_test.ts runs
 * the whole page.
 */
async function startBalancer(port: number, servers: string[]) {
  const socketDir = await Deno.makeTempDir({ prefix: "omotai-haproxy-run-" });
  const config = substitute(
    deployBlock(await readDeployDoc(), "deploy-haproxy").body
      .replace("10.0.0.11:8080", servers[0])
      .replace("10.0.0.12:8080", servers[1]),
    new Map([
      ["10.0.0.10", "127.0.0.1"],
      ["8000", String(port)],
      ["omotai.internal", "127.0.0.1"],
      ["/run/haproxy", socketDir],
    ]),
  );
  const file = await Deno.makeTempFile({ prefix: "omotai-haproxy-", suffix: ".cfg" });
  await Deno.writeTextFile(file, config);
  const child = new Deno.Command("haproxy", {
    args: ["-db", "-f", file],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let stderr = "";
  child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (c) => void (stderr += c) }),
  ).catch(() => {});
  const base = `http://127.0.0.1:${port}`;
  // Up once both servers pass the documented health check.
  assert.ok(
    await eventually(async () => {
      try {
        const r = await fetch(`${base}/console.css`);
        await r.body?.cancel();
        return r.status === 200;
      } catch {
        return false;
      }
    }, 15_000),
    `HAProxy did not serve:\n${stderr}`,
  );
  return {
    url: base,
    stderr: () => stderr,
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
      await Deno.remove(file).catch(() => {});
      await Deno.remove(socketDir, { recursive: true }).catch(() => {});
    },
  };
}

/** A call to a runtime's operator API with the tenant's admin token. */
async function api(base: string, path: string, init: RequestInit = {}): Promise<Response> {
  return await fetch(`${base}${path}`, {
    ...init,
    headers: {
      Authorization: `Bearer ${token}`,
      "content-type": "application/json",
      ...init.headers,
    },
  });
}

async function json<T>(base: string, path: string, init?: RequestInit): Promise<T> {
  const r = await api(base, path, init);
  assert.ok(r.ok, `${path}: ${r.status}`);
  return await r.json() as T;
}

interface SessionRow {
  id: string;
  agent: string | null;
  runtime?: string;
  gone?: boolean;
}

async function connect(base: string, key: string): Promise<TestClient> {
  const client = new Client({ name: "shared-store-test", version: "0" });
  await client.connect(keyedTransport(base, key, "http"));
  return new TestClient(client);
}

Deno.test("deploy.md: two runtimes behind HAProxy on one PostgreSQL: a confirm raised on one is approved through the other, the site gets one POST, and one chain holds both", async (t) => {
  const site = serveTwoOrigins(() => ({
    "/plain": () =>
      html(`<form method="post" action="/transfer">
        <input name="amount" value="10"><input name="to" value="alice">
        <button type="submit">Pay</button></form>`),
    "/page": () => html("<h1>Just a page</h1>", "Page"),
    "/transfer": () => html("<p>sent</p>", "Sent"),
  }));
  const policyDir = `runs/test-shared-policy-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(policyDir, { recursive: true });
  const policyFile = `${policyDir}/policy.yaml`;
  await Deno.writeTextFile(
    policyFile,
    `allowed_origins: [${site.origin}]\nread_only: true\nconfirm_writes: true\nconfirm_timeout_seconds: 60\n`,
  );
  const agents = new PgAgentStore(owner, "acme");
  const ada = await agents.add("ada");
  const gina = await new PgAgentStore(owner, "globex").add("gina");
  const lbPort = freePort();
  const lbHost = `127.0.0.1:${lbPort}`;
  const runtimes = await Promise.all([
    spawnRuntime("a", await runtimeLogin("omotai_acme_1", "acme"), policyFile, lbHost),
    spawnRuntime("b", await runtimeLogin("omotai_acme_2", "acme"), policyFile, lbHost),
  ]);
  const clients: TestClient[] = [];
  try {
    await using lb = await startBalancer(lbPort, runtimes.map((r) => new URL(r.url).host));
    const bases = runtimes.map((r) => r.url);

    /** Which runtime holds the session of `agent` (its own list names no other runtime). */
    const holderOf = async (agent: string) => {
      for (const [i, base] of bases.entries()) {
        const list = await json<SessionRow[]>(base, "/api/sessions");
        const mine = list.find((s) => s.agent === agent && s.runtime === undefined);
        if (mine) return { holder: i, other: 1 - i, session: mine.id };
      }
      throw new Error(`no runtime holds ${agent}'s session`);
    };

    await t.step(
      "a key of another tenant opens nothing, through the balancer or directly",
      async () => {
        for (const base of [lb.url, ...bases]) {
          const r = await fetch(`${base}/mcp`, {
            method: "POST",
            headers: {
              Authorization: `Bearer ${gina.key}`,
              "content-type": "application/json",
              accept: "application/json, text/event-stream",
            },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
          });
          await r.body?.cancel();
          assert.equal(r.status, 401, base);
        }
      },
    );

    await t.step(
      "an admin token opens one tenant's console: globex's is refused on acme's runtimes, a rotated one everywhere",
      async () => {
        for (const base of bases) {
          const r = await fetch(`${base}/api/approvals`, {
            headers: { Authorization: `Bearer ${GLOBEX_TOKEN}` },
          });
          assert.equal(r.status, 401, "globex's token on acme's runtime");
          await r.body?.cancel();
          assert.equal((await api(base, "/api/agents")).status, 200, "acme's token");
        }
        const rotated = await omotai(["tenant", "token", "acme", "--database", pg.ownerUrl]);
        assert.equal(rotated.code, 0, rotated.err);
        const fresh = rotated.out.trim().split("\n").at(-1)!;
        // Every runtime reads the hash again within ADMIN_REFRESH_MS. Tried at most three
        // times after that: a refused bearer counts against its client (five a minute).
        token = fresh;
        await new Promise((r) => setTimeout(r, ADMIN_REFRESH_MS + 500));
        let codes: number[] = [];
        for (let i = 0; i < 3; i++) {
          codes = await Promise.all(bases.map(async (base) => {
            const r = await api(base, "/api/agents");
            await r.body?.cancel();
            return r.status;
          }));
          if (codes.every((c) => c === 200)) break;
          await new Promise((r) => setTimeout(r, 1_000));
        }
        assert.deepEqual(codes, [200, 200], "the new token works on every runtime");
        for (const base of bases) {
          const r = await fetch(`${base}/api/agents`, {
            headers: { Authorization: `Bearer ${ACME_TOKEN}` },
          });
          await r.body?.cancel();
          assert.equal(r.status, 401, "the old one is refused on every runtime");
        }
      },
    );

    const c = await connect(lb.url, ada.key);
    clients.push(c);
    let where!: { holder: number; other: number; session: string };

    await t.step(
      "the confirm raised on the holder is listed and approved on the other runtime; the site gets one POST",
      async () => {
        const page = await c.call("browser_navigate", { url: `${site.origin}/plain` });
        assert.ok(!page.isError, page.text);
        where = await holderOf("ada");
        const holder = bases[where.holder];
        const other = bases[where.other];
        const click = c.call("browser_click", { ref: refOf(page.text, /button "Pay"/) });
        let pending: { id: string; origin: string; method: string }[] = [];
        assert.ok(
          await eventually(async () => {
            pending = await json(other, "/api/approvals?state=pending");
            return pending.length === 1;
          }, 15_000),
          "the other runtime lists the approval",
        );
        assert.equal(pending[0].method, "POST");
        const onHolder = await json<{ id: string }[]>(holder, "/api/approvals?state=pending");
        assert.deepEqual(
          onHolder.map((a) => a.id),
          [pending[0].id],
          "the holder lists the same one",
        );
        const decidedAt = Date.now();
        const r = await api(other, `/api/approvals/${pending[0].id}`, {
          method: "POST",
          body: JSON.stringify({ decision: "approve" }),
        });
        assert.equal(r.status, 200, await r.text());
        const result = await click;
        const releasedMs = Date.now() - decidedAt;
        console.log(`  approval on the other runtime released the call in ${releasedMs} ms`);
        assert.match(result.text, /the operator approved the POST form/);
        assert.deepEqual(site.posts.get("/transfer"), ["amount=10&to=alice"], "exactly one POST");
        const again = await api(holder, `/api/approvals/${pending[0].id}`, {
          method: "POST",
          body: JSON.stringify({ decision: "deny" }),
        });
        assert.equal(again.status, 409, "a second decision, on the holder, loses");
        await again.body?.cancel();
      },
    );

    await t.step(
      "a question asked on the holder is answered on the other runtime; an operator logged in on one is logged in on both",
      async () => {
        const holder = bases[where.holder];
        const other = bases[where.other];
        const asked = c.call("ask_human", { question: "Which invoice?" });
        let pending: { id: string; question: string }[] = [];
        assert.ok(
          await eventually(async () => {
            pending = await json(other, "/api/questions?state=pending");
            return pending.length === 1;
          }, 10_000),
          "the other runtime lists the question",
        );
        assert.equal(pending[0].question, "Which invoice?");
        const r = await api(other, `/api/questions/${pending[0].id}`, {
          method: "POST",
          body: JSON.stringify({ answer: "INV-7" }),
        });
        assert.equal(r.status, 200, await r.text());
        assert.match((await asked).text, /INV-7/);
        const again = await api(holder, `/api/questions/${pending[0].id}`, {
          method: "POST",
          body: JSON.stringify({ answer: "late" }),
        });
        assert.equal(again.status, 409);
        await again.body?.cancel();
        // The console's login: made on one runtime, a page of the other opens with its cookie.
        const login = await fetch(`${holder}/login`, {
          method: "POST",
          body: new URLSearchParams({ token }),
          redirect: "manual",
        });
        assert.equal(login.status, 303);
        await login.body?.cancel();
        const cookie = login.headers.get("set-cookie")!.split(";")[0];
        const page = await fetch(`${other}/questions`, { headers: { cookie }, redirect: "manual" });
        assert.equal(page.status, 200, "logged in on the other runtime too");
        assert.match(await page.text(), /INV-7/, "its history shows the holder's question");
      },
    );

    await t.step(
      "the other runtime's console lists the holder's session, with its runtime",
      async () => {
        const other = bases[where.other];
        assert.ok(
          await eventually(async () => {
            const list = await json<SessionRow[]>(other, "/api/sessions");
            return list.some((s) => s.id === where.session && !!s.runtime && s.gone === false);
          }, 10_000),
          "listed on the other runtime",
        );
        const audit = await json<{ reason: string | null }[]>(other, "/api/audit?limit=200");
        assert.ok(
          audit.some((r) => r.reason === "APPROVED"),
          "the holder's rows, read on the other",
        );
      },
    );

    await t.step(
      "a domain rule set on the other runtime applies on the holder at its next action",
      async () => {
        const other = bases[where.other];
        const added = await api(other, "/api/domains", {
          method: "POST",
          body: JSON.stringify({ origin: site.origin, rule: "deny" }),
        });
        assert.equal(added.status, 201);
        await added.body?.cancel();
        assert.ok(
          await eventually(async () => {
            const r = await c.call("browser_navigate", { url: `${site.origin}/page` });
            return r.isError === true && /DOMAIN_DENIED/.test(r.text);
          }, 10_000),
          "denied on the holder",
        );
        const removed = await api(other, "/api/domains", {
          method: "DELETE",
          body: JSON.stringify({ origin: site.origin }),
        });
        assert.equal(removed.status, 200);
        await removed.body?.cancel();
        assert.ok(
          await eventually(async () => {
            const r = await c.call("browser_navigate", { url: `${site.origin}/page` });
            return !r.isError;
          }, 10_000),
          "allowed again once the rule is gone",
        );
      },
    );

    await t.step(
      "the database stopped mid-session: calls are refused, the console says so, and the runtime recovers by itself",
      async () => {
        const holder = bases[where.holder];
        await pg.stop();
        const hits = site.hits.length;
        try {
          const r = await c.call("browser_navigate", { url: `${site.origin}/page` }).catch((e) => ({
            isError: true,
            text: String(e),
          }));
          assert.equal(r.isError, true, "refused while the database is down");
          assert.equal(site.hits.length, hits, "nothing reached the site");
          assert.ok(
            await eventually(async () => {
              const s = await json<{ storeAvailable: boolean }>(holder, "/api/status");
              return s.storeAvailable === false;
            }, 30_000),
            "the console says the database does not answer",
          );
        } finally {
          await pg.start();
        }
        assert.ok(
          await eventually(async () => {
            const r = await c.call("browser_navigate", { url: `${site.origin}/page` }).catch(
              () => ({
                isError: true,
              }),
            );
            return !r.isError;
          }, 60_000),
          "recovered without a restart",
        );
        // Every runtime, not only the holder: the next steps' sessions may land on either,
        // and each finds the database again on its own poll.
        for (const base of bases) {
          assert.ok(
            await eventually(async () => {
              const s = await json<{ storeAvailable: boolean }>(base, "/api/status");
              return s.storeAvailable;
            }, 30_000),
            `${base} recovered`,
          );
        }
      },
    );

    await t.step("a kill on the other runtime's console ends the holder's session", async () => {
      const r = await api(bases[where.other], `/api/sessions/${where.session}/kill`, {
        method: "POST",
      });
      assert.equal(r.status, 200, await r.text());
      assert.ok(
        await eventually(async () => {
          const list = await json<SessionRow[]>(bases[where.holder], "/api/sessions");
          return !list.some((s) => s.id === where.session);
        }, 10_000),
        "the holder ended it",
      );
    });

    await t.step(
      "an agent removed in the database loses its sessions on every runtime",
      async () => {
        const bob = await agents.add("bob");
        const b = await connect(lb.url, bob.key);
        clients.push(b);
        const opened = await b.call("browser_navigate", { url: `${site.origin}/page` });
        assert.ok(!opened.isError, opened.text);
        const { holder } = await holderOf("bob");
        assert.equal(await agents.remove("bob"), true);
        assert.ok(
          await eventually(async () => {
            const list = await json<SessionRow[]>(bases[holder], "/api/sessions");
            return !list.some((s) => s.agent === "bob");
          }, 10_000),
          "its session ended",
        );
        const r = await b.call("browser_snapshot").catch((e) => ({
          isError: true,
          text: String(e),
        }));
        assert.equal(r.isError, true, "its key is refused");
      },
    );

    await t.step(
      "both runtimes stop cleanly; their rows are one chain that verifies, with each runtime's checkpoints",
      async () => {
        for (const c of clients.splice(0)) await c[Symbol.asyncDispose]().catch(() => {});
        for (const rt of runtimes) rt.child.kill("SIGTERM");
        for (const rt of runtimes) assert.equal((await rt.child.status).code, 0, rt.stderr());
        const chain = new PgAuditLog(owner, "acme", { redactor: processRedactor() });
        const rows = await chain.rows();
        assert.equal(rows.filter((r) => r.kind === "runtime_started").length, 2);
        assert.equal(rows.filter((r) => r.kind === "runtime_stopped").length, 2);
        assert.equal(
          rows.filter((r) => r.kind === "approval" && r.reason === "APPROVED").length,
          1,
          "one approval, written once (by the runtime whose call waited)",
        );
        assert.ok((await chain.verify()).ok);
        const globex = await new PgAuditLog(owner, "globex", { redactor: processRedactor() })
          .rows();
        assert.ok(!globex.some((r) => r.agent === "ada" || r.agent === "bob"), "nothing in globex");
        // `omotai audit verify`, as docs/deploy.md runs it, with each runtime's checkpoints.
        for (const rt of runtimes) {
          const out = await omotai([
            "audit",
            "verify",
            "--database",
            pg.ownerUrl,
            "--tenant",
            "acme",
            "--checkpoints",
            `${rt.dataDir}/audit-checkpoints.jsonl`,
            "--checkpoint-key",
            `${rt.dataDir}/audit-checkpoint.pub`,
          ]);
          const text = out.out + out.err;
          assert.equal(out.code, 0, text);
          for (const secret of [new URL(pg.ownerUrl).password, "pw-omotai_acme_2"]) {
            assert.ok(!text.includes(secret), "no password printed");
          }
          for (const rt of runtimes) {
            assert.ok(!rt.stderr().includes(new URL(pg.appUrl).password), "nor logged");
            assert.ok(!rt.stderr().includes("second-runtime-pw"), "nor logged");
          }
        }
      },
    );
  } finally {
    for (const c of clients) await c[Symbol.asyncDispose]().catch(() => {});
    for (const rt of runtimes) {
      try {
        rt.child.kill("SIGKILL");
      } catch { /* already gone */ }
      await rt.child.status;
      await Deno.remove(rt.dataDir, { recursive: true }).catch(() => {});
    }
    await Deno.remove(policyDir, { recursive: true }).catch(() => {});
    await site[Symbol.asyncDispose]();
  }
});

Deno.test(clusterTeardown("shared store end-to-end", pg, owner));
Deno.test("shared store end-to-end: the client faults are no longer tolerated", () => {
  faults[Symbol.dispose]();
});
