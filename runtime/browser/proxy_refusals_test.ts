import assert from "node:assert/strict";
import { authorityOf, ProxyRefusals } from "./proxy_refusals.ts";

Deno.test("authorityOf() spells out the port of http(s) and ws(s) URLs only", () => {
  assert.equal(authorityOf("https://portal.test/a?q=1"), "portal.test:443");
  assert.equal(authorityOf("ws://127.0.0.3:9001/s"), "127.0.0.3:9001");
  assert.equal(authorityOf("wss://x.test"), "x.test:443");
  assert.equal(authorityOf("http://[::1]/"), "[::1]:80");
  assert.equal(authorityOf("data:text/plain,hi"), undefined);
  assert.equal(authorityOf("not a url"), undefined);
});

Deno.test("ProxyRefusals.requestReason() gives a refused request's reason once, by method and shown URL", () => {
  let now = 0;
  const r = new ProxyRefusals({ ttlMs: 1_000 }, () => now);
  r.requestRefused("post", "https://portal.test/transfer", "READ_ONLY_WRITE");
  assert.equal(r.requestReason("GET", "https://portal.test/transfer"), undefined);
  assert.equal(r.requestReason("POST", "https://portal.test/other"), undefined);
  assert.equal(r.requestReason("POST", "https://portal.test/transfer"), "READ_ONLY_WRITE");
  assert.equal(r.requestReason("POST", "https://portal.test/transfer"), undefined, "once");
  r.requestRefused("GET", "https://portal.test/late", "ORIGIN_NOT_ALLOWED");
  now = 1_001;
  assert.equal(r.requestReason("GET", "https://portal.test/late"), undefined, "too old");
});

Deno.test("ProxyRefusals.tunnelReason() names a refused tunnel only for a request that failed on one", () => {
  let now = 0;
  const r = new ProxyRefusals({ ttlMs: 1_000 }, () => now);
  const failed = "net::ERR_TUNNEL_CONNECTION_FAILED";
  assert.equal(r.tunnelReason("https://evil.test/x", failed), undefined);
  r.tunnelRefused("evil.test:443", "ORIGIN_NOT_ALLOWED");
  assert.equal(r.tunnelReason("https://evil.test/x", failed), "ORIGIN_NOT_ALLOWED");
  assert.equal(r.tunnelReason("https://evil.test/x", "net::ERR_CONNECTION_RESET"), undefined);
  assert.equal(r.tunnelReason("https://evil.test:8443/x", failed), undefined, "another port");
  assert.equal(r.tunnelReason("http://evil.test/x", failed), undefined, "port 80 is another");
  now = 1_001;
  assert.equal(r.tunnelReason("https://evil.test/x", failed), undefined, "too old");
});

Deno.test("ProxyRefusals.tunnelRefused() matches a page's WebSocket to the refusal of its tunnel, once", () => {
  let now = 0;
  const r = new ProxyRefusals({ ttlMs: 1_000 }, () => now);
  r.socketOpened("w1", "ws://127.0.0.3:9001/leak");
  r.socketOpened("w2", "wss://other.test/s");
  // Chromium's own tunnels name no socket: nothing to report.
  assert.deepEqual(r.tunnelRefused("accounts.example:443", "ORIGIN_NOT_ALLOWED"), []);
  assert.deepEqual(r.tunnelRefused("127.0.0.3:9001", "ORIGIN_NOT_ALLOWED"), [
    "ws://127.0.0.3:9001/leak",
  ]);
  assert.deepEqual(r.tunnelRefused("127.0.0.3:9001", "ORIGIN_NOT_ALLOWED"), [], "once");
  now = 2_000;
  assert.deepEqual(r.tunnelRefused("other.test:443", "ORIGIN_NOT_ALLOWED"), [], "stale socket");
});

Deno.test("ProxyRefusals keeps a bounded number of refusals and sockets", () => {
  const r = new ProxyRefusals({ max: 2 });
  const failed = "net::ERR_TUNNEL_CONNECTION_FAILED";
  for (let i = 0; i < 5; i++) r.tunnelRefused(`h${i}.test:443`, `R${i}`);
  assert.equal(r.tunnelReason("https://h0.test/", failed), undefined);
  assert.equal(r.tunnelReason("https://h4.test/", failed), "R4");
  for (let i = 0; i < 5; i++) r.requestRefused("GET", `https://q.test/${i}`, `Q${i}`);
  assert.equal(r.requestReason("GET", "https://q.test/0"), undefined);
  assert.equal(r.requestReason("GET", "https://q.test/4"), "Q4");
  for (let i = 0; i < 5; i++) r.socketOpened(`s${i}`, `wss://s${i}.test/`);
  assert.deepEqual(r.tunnelRefused("s0.test:443", "X"), []);
  assert.deepEqual(r.tunnelRefused("s4.test:443", "X"), ["wss://s4.test/"]);
});
