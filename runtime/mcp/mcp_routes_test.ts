import assert from "node:assert/strict";
import { Hono } from "hono";
import { Servers } from "../../tests/helpers/mcp_servers.ts";
import { type AgentEnv, agentGuard } from "./agent_guard.ts";
import { httpErrorHandler } from "./http_errors.ts";
import { MCP_ROUTES, mountRoutes, routesIndex } from "./mcp_routes.ts";
import { McpSessionTable } from "./mcp_session_table.ts";
import { SessionPlaces } from "./session_places.ts";
import { sessionAdmission, type TransportDeps } from "./transport_deps.ts";

function deps(servers: Servers): TransportDeps {
  const sessions = new McpSessionTable();
  return {
    sessions,
    newServer: servers.newServer,
    admit: sessionAdmission({ places: new SessionPlaces({ held: () => sessions.agents() }) }),
  };
}

Deno.test("MCP_ROUTES holds both transports, each path once", () => {
  const paths = MCP_ROUTES.map((r) => r.path);
  assert.deepEqual([...paths].sort(), ["/mcp", "/messages", "/sse"]);
  assert.equal(new Set(paths).size, paths.length);
  assert.equal(new Set(MCP_ROUTES.map((r) => r.name)).size, MCP_ROUTES.length);
});

Deno.test("mountRoutes() with a guard puts every route's path, whatever the method, behind it", async () => {
  const servers = new Servers();
  const app = new Hono<AgentEnv>();
  app.onError(httpErrorHandler);
  let asked = 0;
  mountRoutes(app, MCP_ROUTES, deps(servers), agentGuard(() => (asked++, undefined)));
  for (const { path } of MCP_ROUTES) {
    for (const method of ["GET", "POST", "DELETE", "PUT"]) {
      const res = await app.request(path, {
        method,
        headers: { authorization: "Bearer wrong", "content-type": "application/json" },
        body: method === "GET" ? undefined : "{}",
      });
      assert.equal(res.status, 401, `${method} ${path}`);
      await res.body?.cancel();
    }
  }
  assert.equal(asked, MCP_ROUTES.length * 4, "the key was checked on every request");
  assert.equal(servers.built, 0, "no handler ran");
});

Deno.test("mountRoutes() without a guard mounts each route with its method", async () => {
  const servers = new Servers();
  const app = new Hono<AgentEnv>();
  app.onError(httpErrorHandler);
  mountRoutes(app, MCP_ROUTES, deps(servers));
  const status = async (method: string, path: string) => {
    const res = await app.request(path, { method, body: method === "GET" ? undefined : "{}" });
    await res.body?.cancel();
    return res.status;
  };
  assert.equal(await status("GET", "/mcp"), 400, "/mcp's handler: start with an initialize");
  assert.equal(await status("DELETE", "/mcp"), 400, "/mcp answers every method");
  assert.equal(await status("POST", "/messages"), 404, "/messages' handler: no such session");
  assert.equal(await status("GET", "/messages"), 404, "/messages is POST only");
  assert.equal(await status("POST", "/sse"), 404, "/sse is GET only");
});

Deno.test("routesIndex() names the runtime and every route's path", () => {
  const index = routesIndex(MCP_ROUTES);
  assert.match(index, /^Omotai MCP runtime\n/);
  for (const r of MCP_ROUTES) assert.ok(index.includes(`  ${r.name}: ${r.path}\n`), r.path);
});
