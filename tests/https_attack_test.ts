/**
 * The attack suite over HTTPS: the egress proxy terminates TLS, so what travels inside an
 * allowed origin's tunnel is judged request by request. Under `read_only`, a WebSocket to the
 * allowed origin (wss: and ws:) carries no write, a WebSocket to the attacker carries nothing,
 * a service worker's POST never leaves, and benign HTTPS browsing still works.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DatabaseSync } from "node:sqlite";
import { databasePath } from "../runtime/store/database.ts";
import { keyedTransport, refOf, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { tempDir } from "./helpers/temp_dir.ts";
import { until } from "./helpers/until.ts";
import { type HttpsSite, serveHttpsSite } from "./fixtures/https_site.ts";

/** What a case sees of the shared site: its origins, and what reached it since the case began. */
interface CaseSite {
  origin: string;
  plainOrigin: string;
  requests: string[];
  socketMessages: string[];
  posts: string[];
}

interface World extends AsyncDisposable {
  c: TestClient;
  url: string;
  adminToken: string;
  site: CaseSite;
  attackerHits: string[];
  /** https://127.0.0.2:P, never allowed. */
  attackerOrigin: string;
  refusals(): string[];
  denials(): { source: string; method: string; origin: string; reason: string }[];
}

/**
 * One runtime, HTTPS site and attacker for the file's cases (each start mints certificates
 * and starts a proxy: CPU the cases need not pay each). A case is its own agent, with its own
 * policy file, and its own session (its own browser, its own refused hosts); what it reads of
 * the audit is its agent's rows, and of the site and the attacker what arrived since it began,
 * so nothing one case did can make another pass.
 */
async function sharedWorld() {
  const attackerHits: string[] = [];
  const attacker = Deno.serve({ hostname: "127.0.0.2", port: 0, onListen: () => {} }, (req) => {
    attackerHits.push(`${req.method} ${new URL(req.url).pathname}`);
    return new Response("ok");
  });
  const site = await serveHttpsSite(`wss://127.0.0.2:${attacker.addr.port}`);
  const dir = await tempDir("omotai-https-");
  const dataDir = dir.path;
  const runtime = await startTestRuntime(dataDir, "allowed_origins: []\n", {
    upstreamCa: [site.caPem],
  });
  let cases = 0;
  const rows = (agent: string) => {
    const db = new DatabaseSync(databasePath(dataDir), { readOnly: true });
    try {
      return db.prepare(
        "SELECT source, method, origin, reason FROM audit WHERE decision = 'deny' AND agent = ? ORDER BY seq",
      ).all(agent) as unknown as {
        source: string;
        method: string;
        origin: string;
        reason: string;
      }[];
    } finally {
      db.close();
    }
  };
  return {
    site,
    /** A case's world: `extra` is added to its agent's policy. */
    async world(extra: (site: HttpsSite) => string = () => ""): Promise<World> {
      const agent = `tls-agent-${++cases}`;
      const policy = `${dataDir}/${agent}.yaml`;
      await Deno.writeTextFile(
        policy,
        `allowed_origins:\n  - ${site.origin}\n  - ${site.plainOrigin}\nread_only: true\n${
          extra(site)
        }`,
      );
      const client = new Client({ name: "https-test", version: "0" });
      await client.connect(
        keyedTransport(runtime.url!, (await runtime.agents.add(agent, policy)).key),
      );
      const c = new TestClient(client);
      const from = {
        requests: site.requests.length,
        socketMessages: site.socketMessages.length,
        posts: site.posts.length,
        attacker: attackerHits.length,
      };
      return {
        c,
        url: runtime.url!,
        adminToken: runtime.adminToken,
        site: {
          origin: site.origin,
          plainOrigin: site.plainOrigin,
          get requests() {
            return site.requests.slice(from.requests);
          },
          get socketMessages() {
            return site.socketMessages.slice(from.socketMessages);
          },
          get posts() {
            return site.posts.slice(from.posts);
          },
        },
        get attackerHits() {
          return attackerHits.slice(from.attacker);
        },
        attackerOrigin: `https://127.0.0.2:${attacker.addr.port}`,
        refusals: () => rows(agent).map((r) => `${r.source} ${r.reason}`),
        denials: () => rows(agent),
        async [Symbol.asyncDispose]() {
          await c[Symbol.asyncDispose]();
        },
      };
    },
    async [Symbol.asyncDispose]() {
      await runtime[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
      await attacker.shutdown();
      await dir[Symbol.asyncDispose]();
    },
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How many WebSocket handshakes the proxy has refused so far. */
const wsRefusals = (w: World) => w.refusals().filter((r) => r === "proxy WEBSOCKET_REFUSED").length;

Deno.test("egress proxy over TLS: the attack suite's HTTPS channels, each case a session of its own", async (t) => {
  await using shared = await sharedWorld();

  await t.step(
    "benign HTTPS browsing works through the TLS-terminating proxy: links, GET search, back",
    async () => {
      await using w = await shared.world();
      const home = await w.c.call("browser_navigate", { url: `${w.site.origin}/` });
      assert.match(home.text, /# HTTPS home/, home.text);
      const next = await w.c.call("browser_click", { ref: refOf(home.text, /"Next page" ->/) });
      assert.match(next.text, /Next over TLS/, next.text);
      const back = await w.c.call("browser_navigate_back");
      assert.match(back.text, /HTTPS home/);
      const query = refOf(back.text, /textbox "Query"/);
      const found = await w.c.call("browser_type", { ref: query, text: "lamp", submit: true });
      assert.match(found.text, /Results for lamp/, found.text);
      assert.ok(w.site.requests.includes("GET /search?q=lamp"), w.site.requests.join(", "));
    },
  );

  await t.step(
    "under read_only a WebSocket write to the allowed origin is refused over wss: and ws:",
    async () => {
      await using w = await shared.world();
      for (const origin of [w.site.origin, w.site.plainOrigin]) {
        const scheme = origin.startsWith("https") ? "wss" : "ws";
        const refusedBefore = wsRefusals(w);
        await w.c.call("browser_navigate", { url: `${origin}/ws-write?scheme=${scheme}` });
        // The proxy's refusal of the handshake is the page's attempt answered.
        await until(() => wsRefusals(w) > refusedBefore);
        const snap = await w.c.call("browser_snapshot");
        assert.doesNotMatch(snap.text, /\bsent\b/, `${scheme}: the socket never opened`);
      }
      assert.deepEqual(w.site.socketMessages, [], "no write reached the site");
      assert.ok(
        !w.site.requests.some((r) => r.startsWith("GET /ws/orders")),
        "no handshake either",
      );
      const refused = w.refusals().filter((r) => r === "proxy WEBSOCKET_REFUSED");
      assert.ok(refused.length >= 2, w.refusals().join(", "));
    },
  );

  await t.step(
    "a WebSocket the policy lists (websockets:) opens and carries its message over TLS",
    async () => {
      await using w = await shared.world((site) => `websockets: [${site.origin}]\n`);
      await w.c.call("browser_navigate", { url: `${w.site.origin}/ws-write?scheme=wss` });
      for (let i = 0; i < 40 && w.site.socketMessages.length === 0; i++) await pause(100);
      assert.deepEqual(w.site.socketMessages, ['{"op":"cancel","order":4471}']);
      // The plain origin is not listed: still refused.
      const refusedBefore = wsRefusals(w);
      await w.c.call("browser_navigate", { url: `${w.site.plainOrigin}/ws-write?scheme=ws` });
      await until(() => wsRefusals(w) > refusedBefore);
      assert.equal(w.site.socketMessages.length, 1);
    },
  );

  await t.step(
    "a WebSocket leak to the attacker and a service worker's POST never leave",
    async () => {
      await using w = await shared.world();
      await w.c.call("browser_navigate", { url: `${w.site.origin}/ws-leak` });
      const readOnly = () => w.refusals().filter((r) => /READ_ONLY_WRITE|READ_ONLY/.test(r)).length;
      const readOnlyBefore = readOnly();
      await w.c.call("browser_navigate", { url: `${w.site.origin}/sw` });
      // The worker installed and its POST refused: what the assertions below look at has happened.
      await until(() => w.site.requests.includes("GET /sw.js") && readOnly() > readOnlyBefore);
      const snap = await w.c.call("browser_snapshot");
      assert.match(snap.text, /Service worker/);
      assert.deepEqual(w.attackerHits, [], "nothing reached the attacker");
      assert.ok(w.site.requests.includes("GET /sw.js"), "the worker was fetched and installed");
      assert.ok(
        w.refusals().some((r) => /READ_ONLY_WRITE|READ_ONLY/.test(r)),
        `the worker's POST was refused: ${w.refusals().join(", ")}`,
      );
      assert.ok(
        !w.site.requests.some((r) => r.startsWith("POST")),
        `no POST reached the site: ${w.site.requests.join(", ")}`,
      );
    },
  );

  await t.step(
    "a host whose tunnel the policy refused is refused in the browser from then on, each request audited and listed",
    async () => {
      await using w = await shared.world();
      const attacker = w.attackerOrigin;
      const first = await w.c.call("browser_navigate", { url: `${w.site.origin}/pixels` });
      assert.match(first.text, /# Pixels/);
      const before = w.denials().length;
      // The second visit: the images fail in Chromium, before a connection is even opened.
      await w.c.call("browser_navigate", { url: `${w.site.origin}/` });
      const again = await w.c.call("browser_navigate", { url: `${w.site.origin}/pixels` });
      assert.match(again.text, /# Pixels/);
      await pause(500);
      const later = w.denials().slice(before).filter((d) => d.origin === attacker);
      assert.ok(
        later.some((d) =>
          d.source === "proxy" && d.method === "GET" && d.reason === "ORIGIN_NOT_ALLOWED"
        ),
        `each in-browser refusal is audited as a GET: ${JSON.stringify(later)}`,
      );
      assert.ok(!later.some((d) => d.method === "CONNECT"), "no tunnel was asked for again");
      const net = await w.c.call("browser_network_requests", {});
      assert.match(net.text, /\/pixel => \[BLOCKED\] ORIGIN_NOT_ALLOWED/, net.text);
      const snap = await w.c.call("browser_snapshot");
      assert.match(
        again.text + snap.text,
        new RegExp(
          `blocked \\d+ requests? since the last snapshot: ORIGIN_NOT_ALLOWED: ${
            attacker.replaceAll(".", "\\.")
          }`,
        ),
      );
      assert.deepEqual(w.attackerHits, [], "nothing reached the attacker");
      assert.doesNotMatch(JSON.stringify(w.denials()) + net.text, /secret-page-text/);
    },
  );

  await t.step(
    "an allowed origin whose certificate is for another name is refused with its reason; the CA key is 0600 and gone after",
    async () => {
      // Its own runtime (its CA key is to be gone after it); the shared site's CA signs the leaf.
      const site = shared.site;
      const wrong = await site.ca.leafFor("other.test");
      const seen: string[] = [];
      const server = Deno.serve(
        { hostname: "127.0.0.1", port: 0, cert: wrong.cert, key: wrong.key, onListen: () => {} },
        (req) => {
          seen.push(req.url);
          return new Response("should not be read");
        },
      );
      const origin = `https://127.0.0.1:${server.addr.port}`;
      await using dir = await tempDir("omotai-https-name-");
      const dataDir = dir.path;
      const runtime = await startTestRuntime(dataDir, `allowed_origins: [${origin}]\n`, {
        upstreamCa: [site.caPem],
      });
      try {
        const key = await Deno.stat(`${dataDir}/proxy-ca/ca.key`);
        assert.equal((key.mode ?? 0) & 0o777, 0o600);
        const client = new Client({ name: "https-name", version: "0" });
        await client.connect(
          keyedTransport(runtime.url!, (await runtime.agents.add("name-agent")).key),
        );
        await using c = new TestClient(client);
        const r = await c.call("browser_navigate", { url: `${origin}/` });
        assert.doesNotMatch(r.text, /should not be read/);
        assert.deepEqual(seen, [], "nothing was sent to a server the proxy could not verify");
        const db = new DatabaseSync(databasePath(dataDir), { readOnly: true });
        const reasons = db.prepare("SELECT reason FROM audit WHERE source = 'proxy'").all()
          .map((x) => String(x.reason));
        db.close();
        assert.ok(reasons.includes("UPSTREAM_CERT_NAME"), reasons.join(", "));
      } finally {
        await runtime[Symbol.asyncDispose]();
        await server.shutdown();
      }
      await assert.rejects(Deno.stat(`${dataDir}/proxy-ca/ca.key`), Deno.errors.NotFound);
    },
  );

  await t.step(
    "an approved HTTPS form POST goes out once through the proxy; a denied one not at all",
    async () => {
      await using w = await shared.world(() =>
        "confirm_writes: true\nconfirm_timeout_seconds: 30\n"
      );
      const api = (path: string, init: RequestInit = {}) =>
        fetch(new URL(path, w.url), {
          ...init,
          headers: { Authorization: `Bearer ${w.adminToken}`, "Content-Type": "application/json" },
        });
      // The approval comes up once the click reached the form: in seconds, which a loaded machine
      // stretches (a fixed count of polls once ran out before it came).
      const decideNext = async (decision: "approve" | "deny") => {
        const id = await until(async () => {
          const pending = await (await api("/api/approvals?state=pending")).json() as {
            id: string;
          }[];
          return pending[0]?.id;
        }).catch(() => {
          throw new Error("no approval came up");
        });
        const r = await api(`/api/approvals/${id}`, {
          method: "POST",
          body: JSON.stringify({ decision }),
        });
        assert.equal(r.status, 200);
      };
      const page = await w.c.call("browser_navigate", { url: `${w.site.origin}/order` });
      const [approved] = await Promise.all([
        w.c.call("browser_click", { ref: refOf(page.text, /button "Cancel order"/) }),
        decideNext("approve"),
      ]);
      assert.equal(approved.isError, false, approved.text);
      assert.match(approved.text, /Order cancelled/);
      assert.deepEqual(w.site.posts, ["order=4471"], "the approved POST reached the site once");
      const again = await w.c.call("browser_navigate", { url: `${w.site.origin}/order` });
      const [denied] = await Promise.all([
        w.c.call("browser_click", { ref: refOf(again.text, /button "Cancel order"/) }),
        decideNext("deny"),
      ]);
      assert.match(denied.text, /^denied:/);
      assert.equal(w.site.posts.length, 1, "the denied POST never left");
    },
  );
});
