import assert from "node:assert/strict";
import type { Hono } from "hono";
import {
  agentRouteApp,
  initializeRequest,
  sseEvents,
  TEST_AGENTS,
} from "../../tests/helpers/mcp_servers.ts";
import { until } from "../../tests/helpers/until.ts";
import type { AgentEnv } from "./agent_guard.ts";
import { SessionPlaces } from "./session_places.ts";
import { SSE_MESSAGES_PATH, sseMessages, sseStream } from "./sse_routes.ts";
import { sessionAdmission } from "./transport_deps.ts";

const AGENTS = TEST_AGENTS;
const INITIALIZE = initializeRequest("2024-11-05", "sse-routes-test");

/** The two SSE routes alone on an app; the agent is the one `x-agent` names. */
function routeApp(max?: number) {
  const { app, servers, sessions } = agentRouteApp();
  const deps = {
    sessions,
    newServer: servers.newServer,
    admit: sessionAdmission({ places: new SessionPlaces({ max, held: () => sessions.agents() }) }),
  };
  app.get("/sse", sseStream(deps));
  app.post(SSE_MESSAGES_PATH, sseMessages(deps));
  return { app, servers, sessions };
}

/** Opens an SSE stream as `agent`; reads its events one by one. */
async function openStream(app: Hono<AgentEnv>, agent: string) {
  const res = await app.request("/sse", { headers: { "x-agent": agent } });
  assert.equal(res.status, 200);
  const { next, close } = sseEvents(res.body!);
  const endpoint = await next();
  assert.equal(endpoint.event, "endpoint");
  return { endpoint: endpoint.data, next, close };
}

Deno.test("sseStream() names where to POST, holds its session under its agent until the stream ends, then closes its server", async () => {
  const { app, servers, sessions } = routeApp();
  const stream = await openStream(app, "alice");
  const id = new URL(stream.endpoint, "http://x").searchParams.get("sessionId")!;
  assert.equal(stream.endpoint, `${SSE_MESSAGES_PATH}?sessionId=${id}`);
  assert.ok(sessions.get("sse", id, AGENTS.alice));
  assert.equal(servers.agents[0], AGENTS.alice);
  await stream.close();
  await until(() => sessions.count() === 0);
  await until(() => servers.closed === 1);
});

Deno.test("sseMessages() delivers a JSON-RPC message to its session; its answer comes on the stream", async () => {
  const { app, sessions } = routeApp();
  const stream = await openStream(app, "alice");
  const res = await app.request(stream.endpoint, {
    method: "POST",
    headers: { "x-agent": "alice", "content-type": "application/json" },
    body: JSON.stringify(INITIALIZE),
  });
  assert.equal(res.status, 202);
  await res.body?.cancel();
  const reply = await stream.next();
  assert.equal(reply.event, "message");
  assert.equal(JSON.parse(reply.data).id, 1);
  await stream.close();
  await until(() => sessions.count() === 0);
});

Deno.test("sseMessages() answers an unknown or another agent's session 404, a body not JSON or not JSON-RPC 400", async () => {
  const { app, sessions } = routeApp();
  const stream = await openStream(app, "alice");
  const send = async (path: string, agent: string, body: string) => {
    const res = await app.request(path, {
      method: "POST",
      headers: { "x-agent": agent, "content-type": "application/json" },
      body,
    });
    await res.body?.cancel();
    return res.status;
  };
  assert.equal(await send(stream.endpoint, "bob", JSON.stringify(INITIALIZE)), 404);
  assert.equal(await send(`${SSE_MESSAGES_PATH}?sessionId=nope`, "alice", "{}"), 404);
  assert.equal(await send(SSE_MESSAGES_PATH, "alice", "{}"), 404);
  assert.equal(await send(stream.endpoint, "alice", "not json"), 400);
  assert.equal(await send(stream.endpoint, "alice", JSON.stringify({ hello: 1 })), 400);
  assert.equal(sessions.count(), 1, "alice's session is untouched");
  await stream.close();
  await until(() => sessions.count() === 0);
});

Deno.test("sseStream() refused for capacity answers 503 before building a server; the place comes back when the stream ends", async () => {
  const { app, servers, sessions } = routeApp(1);
  const stream = await openStream(app, "alice");
  const busy = await app.request("/sse", { headers: { "x-agent": "bob" } });
  assert.equal(busy.status, 503);
  assert.match(await busy.text(), /^SERVER_BUSY: /);
  assert.equal(servers.built, 1);
  await stream.close();
  await until(() => sessions.count() === 0);
  const again = await openStream(app, "bob");
  assert.equal(servers.built, 2);
  await again.close();
  await until(() => sessions.count() === 0);
});
