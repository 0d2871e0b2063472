import assert from "node:assert/strict";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { allowedHostsFor, hostGuard } from "./host_guard.ts";

function app() {
  const a = new Hono();
  a.onError((err, c) =>
    err instanceof HTTPException ? c.text(err.message, err.status) : c.text("x", 500)
  );
  a.use("*", hostGuard(allowedHostsFor("127.0.0.1", 8080)));
  a.get("/", (c) => c.text("ok"));
  return a;
}

Deno.test("hostGuard() admits the bound host and localhost", async () => {
  for (const host of ["127.0.0.1:8080", "localhost:8080"]) {
    const res = await app().request("/", { headers: { host } });
    assert.equal(res.status, 200, host);
  }
  const res = await app().request("/", {
    headers: { host: "127.0.0.1:8080", origin: "http://localhost:8080" },
  });
  assert.equal(res.status, 200);
});

Deno.test("hostGuard() refuses rebinding hosts and foreign origins", async () => {
  for (
    const headers of <Record<string, string>[]> [
      { host: "evil.test:8080" },
      { host: "127.0.0.1:9999" },
      { host: "127.0.0.1:8080", origin: "http://evil.test" },
      { host: "127.0.0.1:8080", origin: "null" },
    ]
  ) {
    const res = await app().request("/", { headers });
    assert.equal(res.status, 403, JSON.stringify(headers));
    await res.body?.cancel();
  }
});

Deno.test("allowedHostsFor() brackets IPv6 and adds localhost for loopback", () => {
  assert.deepEqual(allowedHostsFor("::1", 1), ["[::1]:1", "localhost:1"]);
  assert.deepEqual(allowedHostsFor("127.0.0.1", 2), ["127.0.0.1:2", "localhost:2"]);
});
