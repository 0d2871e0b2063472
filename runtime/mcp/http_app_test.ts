import assert from "node:assert/strict";
import type { AgentInfo } from "../store/agent_store.ts";
import { SqliteAgentStore } from "../store/sqlite_agent_store.ts";
import { adminToken } from "../cli/admin_token.ts";
import { OmotaiError } from "../errors.ts";
import { openDatabase } from "../store/database.ts";
import { createHttpApp, type HttpApp, type HttpAppOptions } from "./http_app.ts";
import { allowedHostsFor } from "./host_guard.ts";
import { Servers, sseEvents } from "../../tests/helpers/mcp_servers.ts";

const HOST = "127.0.0.1:8080";
const ACCEPT = "application/json, text/event-stream";
const PROTOCOL = "2025-06-18";

interface Harness extends AsyncDisposable {
  http: HttpApp;
  servers: Servers;
}

function harness(idleTimeoutMs?: number, maxSessions?: number): Harness {
  const servers = new Servers();
  const http = createHttpApp({
    allowedHosts: allowedHostsFor("127.0.0.1", 8080),
    newServer: servers.newServer,
    idleTimeoutMs,
    maxSessions,
  });
  return {
    http,
    servers,
    async [Symbol.asyncDispose]() {
      await http.closeAll();
    },
  };
}

function post(
  http: HttpApp,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return Promise.resolve(http.app.request("/mcp", {
    method: "POST",
    headers: { host: HOST, accept: ACCEPT, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  }));
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: PROTOCOL,
    capabilities: {},
    clientInfo: { name: "http-app-test", version: "0" },
  },
};

/** The JSON-RPC messages of a response, whether JSON or an SSE stream. */
async function messages(res: Response): Promise<Record<string, unknown>[]> {
  const text = await res.text();
  if (res.headers.get("content-type")?.includes("application/json")) return [JSON.parse(text)];
  return text.split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => JSON.parse(line.slice(5)));
}

/** Opens a Streamable HTTP session (sending `headers` with every request); returns its id. */
async function initialize(http: HttpApp, headers: Record<string, string> = {}): Promise<string> {
  const res = await post(http, INITIALIZE, headers);
  assert.equal(res.status, 200);
  const id = res.headers.get("mcp-session-id");
  assert.ok(id, "initialize answers with an Mcp-Session-Id header");
  const [reply] = await messages(res);
  assert.equal(reply.id, 1);
  assert.equal(
    (reply.result as { serverInfo: { name: string } }).serverInfo.name,
    "test-server",
  );
  const ack = await post(
    http,
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { ...headers, "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
  );
  assert.equal(ack.status, 202);
  await ack.body?.cancel();
  return id;
}

Deno.test("createHttpApp() refuses a foreign Host header", async () => {
  await using h = harness();
  for (const host of ["evil.test:8080", "127.0.0.1:9999", "evil.test"]) {
    for (const path of ["/", "/mcp", "/sse", "/nowhere"]) {
      const res = await h.http.app.request(path, { headers: { host } });
      assert.equal(res.status, 403, `${host} ${path}`);
      assert.match(await res.text(), /unexpected Host header/);
    }
  }
  // A refused initialize builds no server.
  const res = await post(h.http, INITIALIZE, { host: "rebind.test:8080" });
  assert.equal(res.status, 403);
  await res.body?.cancel();
  assert.equal(h.servers.built, 0);
  assert.equal(h.http.connectionCount(), 0);
});

Deno.test("createHttpApp() refuses a foreign Origin header", async () => {
  await using h = harness();
  for (const origin of ["http://evil.test", "https://127.0.0.1:8080", "null"]) {
    const res = await post(h.http, INITIALIZE, { origin });
    assert.equal(res.status, 403, origin);
    assert.match(await res.text(), /unexpected Origin header/);
  }
  assert.equal(h.servers.built, 0);
  assert.equal(h.http.connectionCount(), 0);
});

Deno.test("createHttpApp() answers the allowed Host, localhost and a same-host Origin", async () => {
  await using h = harness();
  for (
    const headers of <Record<string, string>[]> [
      { host: HOST },
      { host: "localhost:8080" },
      { host: HOST, origin: `http://${HOST}` },
    ]
  ) {
    const res = await h.http.app.request("/", { headers });
    assert.equal(res.status, 200, JSON.stringify(headers));
    assert.match(await res.text(), /Streamable HTTP: \/mcp/);
  }
});

Deno.test("createHttpApp() answers unknown paths with 404", async () => {
  await using h = harness();
  for (
    const [method, path] of [["GET", "/nowhere"], ["POST", "/mcp/extra"], ["GET", "/messages"]]
  ) {
    const res = await h.http.app.request(path, { method, headers: { host: HOST } });
    assert.equal(res.status, 404, `${method} ${path}`);
    await res.body?.cancel();
  }
  assert.equal(h.servers.built, 0);
});

Deno.test("createHttpApp() opens a Streamable HTTP session at initialize and answers tools/list in it", async () => {
  await using h = harness();
  const id = await initialize(h.http);
  assert.equal(h.http.connectionCount(), 1);
  assert.equal(h.servers.built, 1);
  const res = await post(
    h.http,
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
  );
  assert.equal(res.status, 200);
  const [reply] = await messages(res);
  assert.equal(reply.id, 2);
  assert.deepEqual(
    (reply.result as { tools: { name: string }[] }).tools.map((t) => t.name),
    ["echo"],
  );
  // The same session served it: no second server was built.
  assert.equal(h.servers.built, 1);
  // A second initialize is a second, separate session.
  const other = await initialize(h.http);
  assert.notEqual(other, id);
  assert.equal(h.http.connectionCount(), 2);
});

Deno.test("createHttpApp() refuses an unknown session id with 404 and builds no server", async () => {
  await using h = harness();
  await initialize(h.http);
  for (const method of ["POST", "GET", "DELETE"]) {
    const res = await h.http.app.request("/mcp", {
      method,
      headers: {
        host: HOST,
        accept: ACCEPT,
        "content-type": "application/json",
        "mcp-session-id": crypto.randomUUID(),
      },
      body: method === "POST"
        ? JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" })
        : undefined,
    });
    assert.equal(res.status, 404, method);
    const body = await res.json() as { error: { code: number; message: string } };
    assert.deepEqual(body.error, { code: -32001, message: "Session not found" });
  }
  assert.equal(h.servers.built, 1);
  assert.equal(h.http.connectionCount(), 1);
});

Deno.test("createHttpApp() leaves no session behind for anything but an initialize", async () => {
  await using h = harness();
  const get = await h.http.app.request("/mcp", { headers: { host: HOST, accept: ACCEPT } });
  assert.equal(get.status, 400);
  assert.match(await get.text(), /initialize POST/);
  assert.equal(h.servers.built, 0);
  const res = await post(h.http, { jsonrpc: "2.0", id: 1, method: "tools/list" });
  assert.equal(res.status, 400);
  await res.body?.cancel();
  assert.equal(res.headers.get("mcp-session-id"), null);
  // The server built for the attempt was closed again.
  assert.equal(h.servers.built, 1);
  assert.equal(h.servers.closed, 1);
  assert.equal(h.http.connectionCount(), 0);
});

Deno.test("createHttpApp() ends a session on DELETE and closes its server", async () => {
  await using h = harness();
  const id = await initialize(h.http);
  const keep = await initialize(h.http);
  assert.equal(h.http.connectionCount(), 2);
  const del = await h.http.app.request("/mcp", {
    method: "DELETE",
    headers: { host: HOST, "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
  });
  assert.equal(del.status, 200);
  await del.body?.cancel();
  assert.equal(h.servers.closed, 1);
  assert.equal(h.http.connectionCount(), 1);
  // The ended session is gone; the other one still answers.
  const gone = await post(
    h.http,
    { jsonrpc: "2.0", id: 4, method: "tools/list" },
    { "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
  );
  assert.equal(gone.status, 404);
  await gone.body?.cancel();
  const alive = await post(
    h.http,
    { jsonrpc: "2.0", id: 5, method: "tools/list" },
    { "mcp-session-id": keep, "mcp-protocol-version": PROTOCOL },
  );
  assert.equal(alive.status, 200);
  assert.equal((await messages(alive))[0].id, 5);
});

Deno.test("createHttpApp().closeAll() closes every session's server", async () => {
  const h = harness();
  const ids = [await initialize(h.http), await initialize(h.http), await initialize(h.http)];
  assert.equal(h.http.connectionCount(), 3);
  await h.http.closeAll();
  assert.equal(h.servers.closed, 3);
  assert.equal(h.http.connectionCount(), 0);
  const res = await post(
    h.http,
    { jsonrpc: "2.0", id: 6, method: "tools/list" },
    { "mcp-session-id": ids[0], "mcp-protocol-version": PROTOCOL },
  );
  assert.equal(res.status, 404);
  await res.body?.cancel();
});

Deno.test("createHttpApp() closes Streamable HTTP sessions idle longer than idleTimeoutMs", async () => {
  await using h = harness(30);
  await initialize(h.http);
  assert.equal(h.http.connectionCount(), 1);
  const deadline = Date.now() + 2_000;
  while (h.http.connectionCount() > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(h.http.connectionCount(), 0);
  assert.equal(h.servers.closed, 1);
});

Deno.test("createHttpApp() serves legacy SSE: endpoint event, /messages, unknown session refused", async () => {
  await using h = harness();
  const unknown = await h.http.app.request("/messages?sessionId=nope", {
    method: "POST",
    headers: { host: HOST, "content-type": "application/json" },
    body: JSON.stringify(INITIALIZE),
  });
  assert.equal(unknown.status, 404);
  await unknown.body?.cancel();

  const res = await h.http.app.request("/sse", { headers: { host: HOST } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const { next: nextEvent, close: closeEvents } = sseEvents(res.body!);
  const endpoint = await nextEvent();
  assert.equal(endpoint.event, "endpoint");
  assert.match(endpoint.data, /^\/messages\?sessionId=[0-9a-f-]{36}$/);
  assert.equal(h.http.connectionCount(), 1);

  const send = (body: unknown) =>
    h.http.app.request(endpoint.data, {
      method: "POST",
      headers: { host: HOST, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const notRpc = await send({ hello: "world" });
  assert.equal(notRpc.status, 400);
  await notRpc.body?.cancel();
  const accepted = await send(INITIALIZE);
  assert.equal(accepted.status, 202);
  await accepted.body?.cancel();
  const reply = await nextEvent();
  assert.equal(reply.event, "message");
  assert.equal(JSON.parse(reply.data).id, 1);

  await closeEvents();
  const deadline = Date.now() + 2_000;
  while (h.http.connectionCount() > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(h.http.connectionCount(), 0);
  assert.equal(h.servers.closed, 1);
});

/** An app whose door is locked with real agent keys (an in-memory database). */
interface KeyedHarness extends AsyncDisposable {
  http: HttpApp;
  servers: Servers;
  keys: SqliteAgentStore;
  /** `Authorization` header of an agent's key. */
  bearer(key: string): Record<string, string>;
}

function keyedHarness(
  authenticate?: (token: string) => AgentInfo | undefined | Promise<AgentInfo | undefined>,
  more: Partial<HttpAppOptions> = {},
): KeyedHarness {
  const db = openDatabase(":memory:");
  const keys = new SqliteAgentStore(db);
  const servers = new Servers();
  const http = createHttpApp({
    allowedHosts: allowedHostsFor("127.0.0.1", 8080),
    newServer: servers.newServer,
    authenticate: authenticate ?? ((token) => keys.verify(token)),
    ...more,
  });
  return {
    http,
    servers,
    keys,
    bearer: (key) => ({ authorization: `Bearer ${key}` }),
    async [Symbol.asyncDispose]() {
      await http.closeAll();
      db.close();
    },
  };
}

/** tools/list in session `id`; returns the response. */
function listTools(
  http: HttpApp,
  id: string,
  headers: Record<string, string>,
): Promise<Response> {
  return post(
    http,
    { jsonrpc: "2.0", id: 7, method: "tools/list" },
    { ...headers, "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
  );
}

/** Asserts the one refusal every bad credential gets: 401, challenge, fixed body. */
async function assertUnauthorized(res: Response, what: string): Promise<void> {
  assert.equal(res.status, 401, what);
  assert.equal(res.headers.get("www-authenticate"), 'Bearer realm="omotai"', what);
  assert.equal(res.headers.get("mcp-session-id"), null, what);
  assert.deepEqual(await res.json(), { error: "UNAUTHORIZED" }, what);
}

/** Opens a legacy SSE stream; returns its /messages endpoint and a way to read events. */
async function openSse(http: HttpApp, headers: Record<string, string>) {
  const res = await http.app.request("/sse", { headers: { host: HOST, ...headers } });
  assert.equal(res.status, 200);
  const events = sseEvents(res.body!);
  /** The next event's data, or undefined when the stream ended. */
  const next = (): Promise<string | undefined> =>
    events.next().then((e) => e.data, () => undefined);
  const endpoint = await next();
  assert.match(endpoint ?? "", /^\/messages\?sessionId=/);
  return { endpoint: endpoint!, next, cancel: () => events.close().catch(() => {}) };
}

function sendSse(
  http: HttpApp,
  endpoint: string,
  headers: Record<string, string>,
): Promise<Response> {
  return Promise.resolve(http.app.request(endpoint, {
    method: "POST",
    headers: { host: HOST, "content-type": "application/json", ...headers },
    body: JSON.stringify(INITIALIZE),
  }));
}

Deno.test("createHttpApp() with authenticate answers 401 on /mcp, /sse and /messages without a valid agent key", async () => {
  await using h = keyedHarness();
  const { key } = await h.keys.add("alice");
  const revoked = await h.keys.add("gone");
  await h.keys.remove("gone");
  const admin = adminToken(undefined).token;
  const wrongLast = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
  const credentials: [string, Record<string, string>][] = [
    ["no header", {}],
    ["a wrong key", h.bearer(`omk_${"A".repeat(43)}`)],
    ["a key wrong in its last character", h.bearer(wrongLast)],
    ["a removed key", h.bearer(revoked.key)],
    ["the admin token", h.bearer(admin)],
    ["the key without the Bearer scheme", { authorization: key }],
    ["the key as Basic", { authorization: `Basic ${key}` }],
    ["an empty bearer", { authorization: "Bearer " }],
  ];
  for (const [what, headers] of credentials) {
    await assertUnauthorized(await post(h.http, INITIALIZE, headers), `POST /mcp, ${what}`);
    for (const method of ["GET", "DELETE"]) {
      const res = await h.http.app.request("/mcp", {
        method,
        headers: { host: HOST, accept: ACCEPT, ...headers },
      });
      await assertUnauthorized(res, `${method} /mcp, ${what}`);
    }
    const sse = await h.http.app.request("/sse", { headers: { host: HOST, ...headers } });
    await assertUnauthorized(sse, `GET /sse, ${what}`);
    await assertUnauthorized(
      await sendSse(h.http, "/messages?sessionId=x", headers),
      `POST /messages, ${what}`,
    );
  }
  assert.equal(h.servers.built, 0, "no refused request builds a server");
  assert.equal(h.http.connectionCount(), 0);
  // The index says nothing secret and stays open; the DNS-rebinding check still comes first.
  assert.equal((await h.http.app.request("/", { headers: { host: HOST } })).status, 200);
  const rebound = await post(h.http, INITIALIZE, { host: "evil.test:8080", ...h.bearer(key) });
  assert.equal(rebound.status, 403);
  await rebound.body?.cancel();
  const foreign = await post(h.http, INITIALIZE, { origin: "http://evil.test" });
  assert.equal(foreign.status, 403, "a foreign Origin is refused before the key is asked for");
  await foreign.body?.cancel();
});

Deno.test("createHttpApp() with authenticate: the right key initializes and lists tools, newServer gets its agent", async () => {
  await using h = keyedHarness();
  const { key } = await h.keys.add("alice");
  await h.keys.add("bob");
  // The client calls itself bob: the identity comes from the key, not from clientInfo.
  const claimsBob = await post(
    h.http,
    { ...INITIALIZE, params: { ...INITIALIZE.params, clientInfo: { name: "bob", version: "0" } } },
    h.bearer(key),
  );
  assert.equal(claimsBob.status, 200);
  await claimsBob.body?.cancel();
  assert.equal(h.servers.agents[0]?.name, "alice");
  h.servers.agents.length = 0;
  const id = await initialize(h.http, h.bearer(key));
  const res = await listTools(h.http, id, h.bearer(key));
  assert.equal(res.status, 200);
  const [reply] = await messages(res);
  assert.deepEqual(
    (reply.result as { tools: { name: string }[] }).tools.map((t) => t.name),
    ["echo"],
  );
  const sse = await openSse(h.http, h.bearer(key));
  try {
    assert.deepEqual(h.servers.agents.map((a) => a?.name), ["alice", "alice"]);
    assert.equal(h.servers.agents[0]?.createdAt, (await h.keys.list())[0].createdAt);
    const accepted = await sendSse(h.http, sse.endpoint, h.bearer(key));
    assert.equal(accepted.status, 202);
    await accepted.body?.cancel();
    assert.equal(JSON.parse((await sse.next())!).id, 1);
  } finally {
    await sse.cancel();
  }
});

Deno.test("createHttpApp() with authenticate checks the key on every request: a removed key stops its open session", async () => {
  await using h = keyedHarness();
  const alice = await h.keys.add("alice");
  const bob = await h.keys.add("bob");
  const id = await initialize(h.http, h.bearer(alice.key));
  const keep = await initialize(h.http, h.bearer(bob.key));
  const first = await listTools(h.http, id, h.bearer(alice.key));
  assert.equal(first.status, 200);
  await first.body?.cancel();
  await h.keys.remove("alice");
  await assertUnauthorized(await listTools(h.http, id, h.bearer(alice.key)), "revoked");
  // The agent is added again: the new key does not take over the old key's session.
  const again = await h.keys.add("alice");
  const stolen = await listTools(h.http, id, h.bearer(again.key));
  assert.equal(stolen.status, 404);
  await stolen.body?.cancel();
  const other = await listTools(h.http, keep, h.bearer(bob.key));
  assert.equal(other.status, 200, "other agents go on");
  await other.body?.cancel();
});

Deno.test("createHttpApp() with authenticate refuses a session id used with another agent's key", async () => {
  await using h = keyedHarness();
  const alice = await h.keys.add("alice");
  const bob = await h.keys.add("bob");
  const id = await initialize(h.http, h.bearer(alice.key));
  for (const method of ["POST", "GET", "DELETE"]) {
    const res = await h.http.app.request("/mcp", {
      method,
      headers: {
        host: HOST,
        accept: ACCEPT,
        "content-type": "application/json",
        "mcp-session-id": id,
        "mcp-protocol-version": PROTOCOL,
        ...h.bearer(bob.key),
      },
      body: method === "POST"
        ? JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" })
        : undefined,
    });
    // Answered as an unknown session: bob learns nothing about alice's.
    assert.equal(res.status, 404, method);
    assert.deepEqual((await res.json()).error, { code: -32001, message: "Session not found" });
  }
  const sse = await openSse(h.http, h.bearer(alice.key));
  try {
    const hijack = await sendSse(h.http, sse.endpoint, h.bearer(bob.key));
    assert.equal(hijack.status, 404);
    await hijack.body?.cancel();
    const own = await sendSse(h.http, sse.endpoint, h.bearer(alice.key));
    assert.equal(own.status, 202);
    await own.body?.cancel();
    const mine = await listTools(h.http, id, h.bearer(alice.key));
    assert.equal(mine.status, 200, "the session survived the attempts");
    await mine.body?.cancel();
    assert.equal(h.servers.closed, 0, "no attempt closed a session");
  } finally {
    await sse.cancel();
  }
});

Deno.test("createHttpApp().closeAgent() closes that agent's sessions on both transports, and only those", async () => {
  await using h = keyedHarness();
  const alice = await h.keys.add("alice");
  const bob = await h.keys.add("bob");
  const aliceIds = [
    await initialize(h.http, h.bearer(alice.key)),
    await initialize(h.http, h.bearer(alice.key)),
  ];
  const aliceSse = await openSse(h.http, h.bearer(alice.key));
  const bobId = await initialize(h.http, h.bearer(bob.key));
  const bobSse = await openSse(h.http, h.bearer(bob.key));
  try {
    assert.equal(h.http.connectionCount(), 5);
    assert.equal(await h.http.closeAgent("alice"), 3);
    assert.equal(h.http.connectionCount(), 2);
    assert.equal(h.servers.closed, 3);
    assert.equal(await aliceSse.next(), undefined, "alice's SSE stream ended");
    for (const id of aliceIds) {
      const gone = await listTools(h.http, id, h.bearer(alice.key));
      assert.equal(gone.status, 404, "alice's key still works, her sessions are gone");
      await gone.body?.cancel();
    }
    const kept = await listTools(h.http, bobId, h.bearer(bob.key));
    assert.equal(kept.status, 200);
    await kept.body?.cancel();
    const accepted = await sendSse(h.http, bobSse.endpoint, h.bearer(bob.key));
    assert.equal(accepted.status, 202, "bob's SSE session goes on");
    await accepted.body?.cancel();
    assert.equal(await h.http.closeAgent("alice"), 0);
    assert.equal(await h.http.closeAgent("nobody"), 0);
  } finally {
    await aliceSse.cancel();
    await bobSse.cancel();
  }
});

Deno.test("createHttpApp().closeAgent(name, createdAt) spares the sessions of a re-added key", async () => {
  await using h = keyedHarness();
  const old = await h.keys.add("quickstart");
  const oldInfo = (await h.keys.list()).find((a) => a.name === "quickstart")!;
  const oldId = await initialize(h.http, h.bearer(old.key));
  await h.keys.remove("quickstart");
  // Re-added within the same millisecond would share createdAt: wait one.
  await new Promise((r) => setTimeout(r, 5));
  const fresh = await h.keys.add("quickstart");
  const freshId = await initialize(h.http, h.bearer(fresh.key));
  assert.notEqual(oldId, freshId);
  assert.equal(await h.http.closeAgent("quickstart", oldInfo.createdAt), 1);
  const kept = await listTools(h.http, freshId, h.bearer(fresh.key));
  assert.equal(kept.status, 200, "the new key's session goes on");
  await kept.body?.cancel();
});

Deno.test("createHttpApp() with authenticate stays shut (503) when the key store cannot be read", async () => {
  await using h = keyedHarness(() => {
    throw new Error("database is locked");
  });
  const res = await post(h.http, INITIALIZE, h.bearer(`omk_${"A".repeat(43)}`));
  assert.equal(res.status, 503);
  assert.deepEqual(await res.json(), { error: "AUTH_UNAVAILABLE" });
  assert.equal(h.servers.built, 0);
});

Deno.test("createHttpApp() with maxSessions refuses one more session with 503, Retry-After and SERVER_BUSY before building its server; a freed place is taken again", async () => {
  await using h = harness(undefined, 2);
  assert.equal(h.http.maxSessions, 2);
  const first = await initialize(h.http);
  await initialize(h.http);
  const full = await post(h.http, INITIALIZE);
  assert.equal(full.status, 503);
  assert.equal(full.headers.get("retry-after"), "10");
  assert.match(await full.text(), /^SERVER_BUSY: this runtime holds its 2 sessions/);
  // Legacy SSE counts against the same cap.
  const sse = await h.http.app.request("/sse", { headers: { host: HOST } });
  assert.equal(sse.status, 503);
  await sse.body?.cancel();
  assert.equal(h.servers.built, 2, "no server (no browser) for a refused session");
  // Requests inside an open session are never refused for capacity.
  const inside = await post(
    h.http,
    { jsonrpc: "2.0", id: 7, method: "tools/list" },
    { "mcp-session-id": first, "mcp-protocol-version": PROTOCOL },
  );
  assert.equal(inside.status, 200);
  await inside.body?.cancel();
  const del = await h.http.app.request("/mcp", {
    method: "DELETE",
    headers: { host: HOST, "mcp-session-id": first, "mcp-protocol-version": PROTOCOL },
  });
  await del.body?.cancel();
  await initialize(h.http);
  assert.equal(h.http.connectionCount(), 2);
});

Deno.test("createHttpApp() with maxSessions: initializes racing for the last places get exactly the cap", async () => {
  await using h = harness(undefined, 3);
  const results = await Promise.all(Array.from({ length: 8 }, () => post(h.http, INITIALIZE)));
  const statuses = results.map((r) => r.status).sort();
  for (const r of results) await r.body?.cancel();
  assert.deepEqual(statuses, [200, 200, 200, 503, 503, 503, 503, 503]);
  assert.equal(h.servers.built, 3);
  // A failed initialize gives its place back.
  await using g = harness(undefined, 1);
  const bad = await post(g.http, { jsonrpc: "2.0", id: 1, method: "tools/list" });
  assert.equal(bad.status, 400);
  await bad.body?.cancel();
  await initialize(g.http);
});

/**
 * A keyed app capped at `maxSessions`, each agent's share from `shares` (by name; absent:
 * none of its own); records every capacity refusal.
 */
function sharedHarness(
  maxSessions: number | undefined,
  shares: Record<string, number>,
  idleTimeoutMs?: number,
): KeyedHarness & { refused: string[] } {
  const refused: string[] = [];
  const h = keyedHarness(undefined, {
    maxSessions,
    idleTimeoutMs,
    agentMaxSessions: (agent) => Promise.resolve(shares[agent.name]),
    onRefused: (code, agent) => refused.push(`${code} ${agent?.name}`),
  });
  return Object.assign(h, { refused });
}

/** A DELETE of Streamable HTTP session `id`. */
async function end(http: HttpApp, id: string, headers: Record<string, string>): Promise<void> {
  const res = await http.app.request("/mcp", {
    method: "DELETE",
    headers: { host: HOST, ...headers, "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
}

/** Waits (2 s at most) until `http` holds `n` sessions. */
async function holds(http: HttpApp, n: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (http.connectionCount() !== n && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(http.connectionCount(), n);
}

Deno.test("createHttpApp() with agentMaxSessions refuses an agent past its share with 503, Retry-After and AGENT_BUSY before building its server; another agent still gets in; the cap still holds", async () => {
  await using h = sharedHarness(3, { alice: 2, bob: 2 });
  const alice = h.bearer((await h.keys.add("alice")).key);
  const bob = h.bearer((await h.keys.add("bob")).key);
  const first = await initialize(h.http, alice);
  await initialize(h.http, alice);
  const over = await post(h.http, INITIALIZE, alice);
  assert.equal(over.status, 503);
  assert.equal(over.headers.get("retry-after"), "10");
  assert.equal(over.headers.get("mcp-session-id"), null);
  assert.match(
    await over.text(),
    /^AGENT_BUSY: this agent holds its 2 sessions on this runtime \(max_sessions\)/,
  );
  // Legacy SSE counts against the same share.
  const sse = await h.http.app.request("/sse", { headers: { host: HOST, ...alice } });
  assert.equal(sse.status, 503);
  assert.equal(sse.headers.get("retry-after"), "10");
  assert.match(await sse.text(), /^AGENT_BUSY: /);
  assert.equal(h.servers.built, 2, "no server (no browser) for a refused session");
  // Inside its sessions, the agent is served as before.
  const inside = await listTools(h.http, first, alice);
  assert.equal(inside.status, 200);
  await inside.body?.cancel();
  // Another agent takes the runtime's last place; then the runtime is full for everyone.
  await initialize(h.http, bob);
  const full = await post(h.http, INITIALIZE, bob);
  assert.equal(full.status, 503);
  assert.equal(full.headers.get("retry-after"), "10");
  assert.match(await full.text(), /^SERVER_BUSY: this runtime holds its 3 sessions/);
  assert.deepEqual(h.refused, ["AGENT_BUSY alice", "AGENT_BUSY alice", "SERVER_BUSY bob"]);
  // A session closed frees its agent's place at once.
  await end(h.http, first, alice);
  await initialize(h.http, alice);
  assert.equal(h.http.connectionCount(), 3);
  assert.equal(h.servers.built, 4);
});

Deno.test("createHttpApp() with agentMaxSessions: an agent's share binds below the cap, a share above it never does, none of its own leaves only the cap", async () => {
  await using h = sharedHarness(4, { one: 1, many: 10 });
  const one = h.bearer((await h.keys.add("one")).key);
  const many = h.bearer((await h.keys.add("many")).key);
  const free = h.bearer((await h.keys.add("free")).key);
  await initialize(h.http, one);
  const over = await post(h.http, INITIALIZE, one);
  assert.match(await over.text(), /^AGENT_BUSY: this agent holds its 1 sessions/);
  await initialize(h.http, many);
  await initialize(h.http, many);
  await initialize(h.http, free);
  const full = await post(h.http, INITIALIZE, many);
  assert.match(await full.text(), /^SERVER_BUSY: /);
  assert.deepEqual(h.refused, ["AGENT_BUSY one", "SERVER_BUSY many"]);
});

Deno.test("createHttpApp() with agentMaxSessions: one agent's initializes racing for its share get exactly its share", async () => {
  await using h = sharedHarness(10, { alice: 2, bob: 2 });
  const alice = h.bearer((await h.keys.add("alice")).key);
  const bob = h.bearer((await h.keys.add("bob")).key);
  const results = await Promise.all(
    Array.from({ length: 8 }, () => post(h.http, INITIALIZE, alice)),
  );
  const statuses = results.map((r) => r.status).sort();
  const bodies = await Promise.all(results.map((r) => r.text()));
  assert.deepEqual(statuses, [200, 200, 503, 503, 503, 503, 503, 503]);
  assert.equal(bodies.filter((b) => b.startsWith("AGENT_BUSY: ")).length, 6);
  assert.equal(h.servers.built, 2);
  await initialize(h.http, bob);
  await initialize(h.http, bob);
  assert.equal(h.http.connectionCount(), 4);
});

Deno.test("createHttpApp() with agentMaxSessions: an SSE stream holds a place of its agent's share until it ends; a failed initialize gives its place back", async () => {
  await using h = sharedHarness(5, { alice: 2 });
  const alice = h.bearer((await h.keys.add("alice")).key);
  const a = await openSse(h.http, alice);
  const b = await openSse(h.http, alice);
  try {
    const third = await h.http.app.request("/sse", { headers: { host: HOST, ...alice } });
    assert.equal(third.status, 503);
    assert.match(await third.text(), /^AGENT_BUSY: /);
    const mcp = await post(h.http, INITIALIZE, alice);
    assert.equal(mcp.status, 503);
    await mcp.body?.cancel();
    await a.cancel();
    await holds(h.http, 1);
    // The freed place, taken by a Streamable HTTP session this time.
    const bad = await post(h.http, { jsonrpc: "2.0", id: 1, method: "tools/list" }, alice);
    assert.equal(bad.status, 400);
    await bad.body?.cancel();
    await initialize(h.http, alice);
    assert.equal(h.http.connectionCount(), 2);
  } finally {
    await a.cancel();
    await b.cancel();
  }
});

Deno.test("createHttpApp() with agentMaxSessions: a session swept idle frees its agent's place", async () => {
  await using h = sharedHarness(5, { alice: 1 }, 30);
  const alice = h.bearer((await h.keys.add("alice")).key);
  await initialize(h.http, alice);
  await holds(h.http, 0);
  await initialize(h.http, alice);
});

Deno.test("createHttpApp() with agentMaxSessions refuses the session when the agent's share cannot be read (its policy), building no server", async () => {
  await using h = keyedHarness(undefined, {
    maxSessions: 5,
    agentMaxSessions: () =>
      Promise.reject(new OmotaiError("POLICY_NOT_GRANTED", "this runtime may not read it")),
  });
  const alice = h.bearer((await h.keys.add("alice")).key);
  const res = await post(h.http, INITIALIZE, alice);
  assert.equal(res.status, 503);
  assert.match(await res.text(), /^POLICY_NOT_GRANTED: /);
  const sse = await h.http.app.request("/sse", { headers: { host: HOST, ...alice } });
  assert.equal(sse.status, 503);
  assert.match(await sse.text(), /^POLICY_NOT_GRANTED: /);
  assert.equal(h.servers.built, 0);
});

Deno.test("createHttpApp() with agentMaxSessions: an initialize whose body never ends holds no place of its agent's share (nor a server)", async () => {
  await using h = sharedHarness(2, { alice: 1 });
  const alice = h.bearer((await h.keys.add("alice")).key);
  let stalled!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stalled = controller;
      controller.enqueue(new TextEncoder().encode(JSON.stringify(INITIALIZE).slice(0, 20)));
    },
  });
  const pending = Promise.resolve(h.http.app.request("/mcp", {
    method: "POST",
    headers: { host: HOST, accept: ACCEPT, "content-type": "application/json", ...alice },
    body,
    duplex: "half",
  } as RequestInit));
  // Let the stalled request go as far as it can.
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
  assert.equal(h.servers.built, 0);
  await initialize(h.http, alice);
  assert.equal(h.servers.built, 1);
  // Once it ends, it is an open like any other: past the agent's share.
  stalled.close();
  const late = await pending;
  assert.equal(late.status, 503);
  assert.match(await late.text(), /^AGENT_BUSY: /);
  assert.equal(h.servers.built, 1);
});

Deno.test("createHttpApp() answers an initialize over 4 MiB 413 before taking a place or building a server", async () => {
  await using h = sharedHarness(1, { alice: 1 });
  const alice = h.bearer((await h.keys.add("alice")).key);
  const big = { ...INITIALIZE, params: { ...INITIALIZE.params, pad: "x".repeat(4 * 1024 * 1024) } };
  const res = await post(h.http, big, alice);
  assert.equal(res.status, 413);
  const reply = await res.json() as { error: { message: string } };
  assert.match(reply.error.message, /^Payload Too Large/);
  assert.equal(h.servers.built, 0);
  await initialize(h.http, alice);
});
