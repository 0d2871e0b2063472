import assert from "node:assert/strict";
import { agentRouteApp, initializeRequest, TEST_AGENTS } from "../../tests/helpers/mcp_servers.ts";
import { SessionPlaces } from "./session_places.ts";
import { streamableHttp } from "./streamable_route.ts";
import { sessionAdmission } from "./transport_deps.ts";

const ACCEPT = "application/json, text/event-stream";
const PROTOCOL = "2025-06-18";
const AGENTS = TEST_AGENTS;
const INITIALIZE = initializeRequest(PROTOCOL, "streamable-route-test");

/** `/mcp` alone on an app; the agent is the one `x-agent` names (the guard's job elsewhere). */
function routeApp(max?: number) {
  const { app, servers, sessions } = agentRouteApp();
  const admit = sessionAdmission({
    places: new SessionPlaces({ max, held: () => sessions.agents() }),
  });
  app.all("/mcp", streamableHttp({ sessions, admit, newServer: servers.newServer }));
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    app.request("/mcp", {
      method: "POST",
      headers: { accept: ACCEPT, "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return { app, servers, sessions, post };
}

Deno.test("streamableHttp() opens a session at initialize, in the table under its agent, and answers in it", async () => {
  const { servers, sessions, post } = routeApp();
  const res = await post(INITIALIZE, { "x-agent": "alice" });
  assert.equal(res.status, 200);
  const id = res.headers.get("mcp-session-id")!;
  await res.body?.cancel();
  const session = sessions.get("streamable", id, AGENTS.alice);
  assert.ok(session, "the session is alice's");
  assert.equal(servers.agents[0], AGENTS.alice);

  const headers = { "x-agent": "alice", "mcp-session-id": id, "mcp-protocol-version": PROTOCOL };
  const ack = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, headers);
  assert.equal(ack.status, 202);
  await ack.body?.cancel();
  const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, headers);
  assert.equal(list.status, 200);
  assert.equal(session.activity.idle(Number.MAX_SAFE_INTEGER, 1), false, "busy while it streams");
  assert.match(await list.text(), /"echo"/);
  assert.equal(session.activity.idle(Number.MAX_SAFE_INTEGER, 1), true, "then free to idle");
  await sessions.end(() => true);
});

Deno.test("streamableHttp() answers an unknown session id, or another agent's, 404 Session not found", async () => {
  const { sessions, post } = routeApp();
  const res = await post(INITIALIZE, { "x-agent": "alice" });
  const id = res.headers.get("mcp-session-id")!;
  await res.body?.cancel();
  for (
    const headers of [{ "x-agent": "bob", "mcp-session-id": id }, {
      "x-agent": "alice",
      "mcp-session-id": "nope",
    }]
  ) {
    const other = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, {
      ...headers,
      "mcp-protocol-version": PROTOCOL,
    });
    assert.equal(other.status, 404);
    assert.deepEqual(await other.json(), {
      jsonrpc: "2.0",
      error: { code: -32001, message: "Session not found" },
      id: null,
    });
  }
  assert.equal(sessions.count(), 1, "alice's session is untouched");
  await sessions.end(() => true);
});

Deno.test("streamableHttp() without a session id: 400 for anything but POST, and a POST that is no initialize leaves nothing behind", async () => {
  const { app, servers, sessions, post } = routeApp();
  const get = await app.request("/mcp", { headers: { accept: ACCEPT } });
  assert.equal(get.status, 400);
  await get.body?.cancel();
  assert.equal(servers.built, 0, "no server for a GET");

  const notInit = await post({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  assert.ok(notInit.status >= 400);
  await notInit.body?.cancel();
  assert.equal(sessions.count(), 0);
  assert.equal(servers.built, 1);
  assert.equal(servers.closed, 1, "its server closed");
});

Deno.test("streamableHttp() refuses an initialize for capacity 503 before building a server, and one over 4 MiB 413", async () => {
  const { servers, sessions, post } = routeApp(1);
  const first = await post(INITIALIZE);
  assert.equal(first.status, 200);
  await first.body?.cancel();
  const busy = await post(INITIALIZE);
  assert.equal(busy.status, 503);
  assert.match(await busy.text(), /^SERVER_BUSY: /);
  assert.equal(servers.built, 1);

  const big = await post({ ...INITIALIZE, pad: "x".repeat(4 * 1024 * 1024 + 1) });
  assert.equal(big.status, 413);
  assert.equal(((await big.json()) as { error: { code: number } }).error.code, -32000);
  assert.equal(servers.built, 1, "no server for a body over the bound");
  await sessions.end(() => true);
});
