import assert from "node:assert/strict";
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { OmotaiError } from "../errors.ts";
import { httpErrorHandler, jsonRpcError, RETRY_AFTER_S } from "./http_errors.ts";
import { CapacityError } from "./session_places.ts";

/** An app whose one route throws `err`. */
function throwing(err: Error): Hono {
  const app = new Hono();
  app.onError(httpErrorHandler);
  app.get("/", () => {
    throw err;
  });
  return app;
}

Deno.test("httpErrorHandler() answers an HTTPException with its status and message, or its own response", async () => {
  const plain = await throwing(new HTTPException(404, { message: "no such thing" })).request("/");
  assert.equal(plain.status, 404);
  assert.equal(await plain.text(), "no such thing");

  const own = new Response("teapot", { status: 418, headers: { "x-own": "1" } });
  const res = await throwing(new HTTPException(418, { res: own })).request("/");
  assert.equal(res.status, 418);
  assert.equal(res.headers.get("x-own"), "1");
  assert.equal(await res.text(), "teapot");
});

Deno.test("httpErrorHandler() answers a session refused for capacity 503 with Retry-After and its code", async () => {
  for (const code of ["SERVER_BUSY", "AGENT_BUSY"] as const) {
    const res = await throwing(new CapacityError(code, "try again later")).request("/");
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("retry-after"), String(RETRY_AFTER_S));
    assert.equal(await res.text(), `${code}: try again later`);
  }
});

Deno.test("httpErrorHandler() answers another coded refusal 503 with its code, without Retry-After", async () => {
  const res = await throwing(new OmotaiError("POLICY_NOT_GRANTED", "no world for this policy"))
    .request("/");
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), null);
  assert.equal(await res.text(), "POLICY_NOT_GRANTED: no world for this policy");
});

Deno.test("httpErrorHandler() answers anything else 500 without its message", async () => {
  const res = await throwing(new TypeError("secret-ish detail hunter2")).request("/");
  assert.equal(res.status, 500);
  assert.equal(await res.text(), "internal error");
});

Deno.test("jsonRpcError() is thrown as a JSON-RPC error answer with the given status", async () => {
  const res = await throwing(jsonRpcError(404, -32001, "Session not found")).request("/");
  assert.equal(res.status, 404);
  assert.match(res.headers.get("content-type") ?? "", /application\/json/);
  assert.deepEqual(await res.json(), {
    jsonrpc: "2.0",
    error: { code: -32001, message: "Session not found" },
    id: null,
  });
});
