import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
import { ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createHttpApp, type HttpApp } from "./http_app.ts";
import { allowedHostsFor } from "./host_guard.ts";

const HOST = "127.0.0.1:8080";
const ACCEPT = "application/json, text/event-stream";
const PROTOCOL = "2025-06-18";

/** A small MCP server with one tool; counts the servers built and closed. */
class Servers {
  built = 0;
  closed = 0;

  newServer = (): Server => {
    const server = new Server(
      { name: "test-server", version: "0.0.1" },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: "echo", inputSchema: { type: "object" as const } }],
    }));
    server.onclose = () => {
      this.closed++;
    };
    this.built++;
    return server;
  };
}

interface Harness extends AsyncDisposable {
  http: HttpApp;
  servers: Servers;
}

function harness(idleTimeoutMs?: number): Harness {
  const servers = new Servers();
  const http = createHttpApp({
    allowedHosts: allowedHostsFor("127.0.0.1", 8080),
    newServer: servers.newServer,
    idleTimeoutMs,
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

/** Opens a Streamable HTTP session; returns its id. */
async function initialize(http: HttpApp): Promise<string> {
  const res = await post(http, INITIALIZE);
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
    { "mcp-session-id": id, "mcp-protocol-version": PROTOCOL },
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
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  const nextEvent = async (): Promise<{ event: string; data: string }> => {
    while (!buffer.includes("\n\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("the SSE stream ended");
      buffer += value;
    }
    const end = buffer.indexOf("\n\n");
    const block = buffer.slice(0, end);
    buffer = buffer.slice(end + 2);
    const field = (name: string) =>
      block.split("\n").find((l) => l.startsWith(`${name}:`))?.slice(name.length + 1).trim() ??
        "";
    return { event: field("event"), data: field("data") };
  };
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

  await reader.cancel();
  const deadline = Date.now() + 2_000;
  while (h.http.connectionCount() > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(h.http.connectionCount(), 0);
  assert.equal(h.servers.closed, 1);
});
