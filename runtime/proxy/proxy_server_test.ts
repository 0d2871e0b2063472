import assert from "node:assert/strict";
import type { ProxyQuestion } from "./proxy_protocol.ts";
import { resolveHost, serveProxy } from "./proxy_server.ts";

interface Rig extends AsyncDisposable {
  port: number;
  upstreamPort: number;
  upstreamSeen: string[];
  questions: ProxyQuestion[];
  refusals: string[];
}

function rig(
  allow: (q: ProxyQuestion) => boolean,
  options: { exact?: boolean; resolve?: (h: string) => Promise<string[]> } = {},
): Rig {
  const upstreamSeen: string[] = [];
  const upstream = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      upstreamSeen.push(`${req.method} ${new URL(req.url).pathname} ${await req.text()}`);
      return new Response("hello", { headers: { "x-up": "1" } });
    },
  );
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const questions: ProxyQuestion[] = [];
  const refusals: string[] = [];
  const served = serveProxy(
    listener,
    (q) => {
      questions.push(q);
      return Promise.resolve(
        allow(q)
          ? { allow: true, reason: "OK", exact: options.exact ?? true }
          : { allow: false, reason: "ORIGIN_NOT_ALLOWED", exact: false },
      );
    },
    (_q, reason) => refusals.push(reason),
    options.resolve,
  );
  return {
    port: (listener.addr as Deno.NetAddr).port,
    upstreamPort: upstream.addr.port,
    upstreamSeen,
    questions,
    refusals,
    async [Symbol.asyncDispose]() {
      listener.close();
      await served.catch(() => {});
      await upstream.shutdown();
    },
  };
}

async function exchange(port: number, request: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(request));
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(8192);
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
  }
  try {
    conn.close();
  } catch { /* closed by the proxy */ }
  return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
}

Deno.test("serveProxy() judges each request of a kept-alive connection on its own", async () => {
  await using r = rig((q) => !(q.type === "http" && q.url.endsWith("/smuggled")));
  const target = `http://127.0.0.1:${r.upstreamPort}`;
  // A second request pipelined behind the first is read and judged on its own: refused here.
  const out = await exchange(
    r.port,
    `POST ${target}/a?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nProxy-Connection: keep-alive\r\n\r\nbody` +
      `POST ${target}/smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n`,
  );
  assert.match(out, /^HTTP\/1\.1 200/);
  assert.match(out, /Connection: keep-alive/i);
  assert.match(out, /hello(?=HTTP\/1\.1 403)/, "the body, then the refusal of the second");
  assert.match(out, /X-Omotai-Deny: ORIGIN_NOT_ALLOWED/);
  assert.deepEqual(r.upstreamSeen, ["POST /a body"]);
  assert.deepEqual(r.questions, [
    { type: "http", method: "POST", url: `${target}/a?x=1` },
    { type: "http", method: "POST", url: `${target}/smuggled` },
  ]);
});

Deno.test("serveProxy() closes after a request that asks to, or whose response length is unknown", async () => {
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${r.upstreamPort}`;
  const out = await exchange(
    r.port,
    `GET ${target}/a HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n` +
      `GET ${target}/never HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
  );
  assert.match(out, /Connection: close/i);
  assert.match(out, /hello$/);
  assert.deepEqual(r.upstreamSeen, ["GET /a "]);
  assert.equal(r.questions.length, 1, "nothing after a closing request is read");
});

Deno.test("serveProxy() refuses a denied CONNECT and plain request with 403 and the reason", async () => {
  await using r = rig(() => false);
  const connect = await exchange(
    r.port,
    `CONNECT 127.0.0.1:${r.upstreamPort} HTTP/1.1\r\nHost: x\r\n\r\n`,
  );
  assert.match(connect, /^HTTP\/1\.1 403 Forbidden/);
  assert.match(connect, /X-Omotai-Deny: ORIGIN_NOT_ALLOWED/);
  const plain = await exchange(
    r.port,
    `GET http://127.0.0.1:${r.upstreamPort}/ HTTP/1.1\r\nHost: x\r\n\r\n`,
  );
  assert.match(plain, /^HTTP\/1\.1 403/);
  assert.deepEqual(r.upstreamSeen, []);
  assert.deepEqual(r.questions[0], { type: "connect", host: "127.0.0.1", port: r.upstreamPort });
});

Deno.test("serveProxy() tunnels an allowed CONNECT and refuses chunked uploads and junk", async () => {
  await using r = rig(() => true);
  const tunneled = await exchange(
    r.port,
    `CONNECT 127.0.0.1:${r.upstreamPort} HTTP/1.1\r\nHost: x\r\n\r\nGET /t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  );
  assert.match(tunneled, /^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200/);
  assert.deepEqual(r.upstreamSeen, ["GET /t "]);
  const chunked = await exchange(
    r.port,
    `POST http://127.0.0.1:${r.upstreamPort}/c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
  );
  assert.match(chunked, /^HTTP\/1\.1 411/);
  assert.match(await exchange(r.port, "NONSENSE\r\n\r\n"), /^HTTP\/1\.1 400/);
  assert.match(await exchange(r.port, "GET https://x.test/ HTTP/1.1\r\n\r\n"), /^HTTP\/1\.1 400/);
  // Each refusal is reported to the runtime, which audits it.
  assert.deepEqual(r.refusals, ["CHUNKED_REFUSED", "BAD_REQUEST", "BAD_REQUEST"]);
});

Deno.test("serveProxy() reports an unreachable upstream, and nothing for a socket that sent nothing", async () => {
  await using r = rig(() => true);
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const out = await exchange(
    r.port,
    `GET http://127.0.0.1:${deadPort}/ HTTP/1.1\r\nHost: x\r\n\r\n`,
  );
  assert.match(out, /^HTTP\/1\.1 502/);
  assert.match(out, /X-Omotai-Deny: UPSTREAM_UNREACHABLE/);
  const idle = await Deno.connect({ hostname: "127.0.0.1", port: r.port });
  idle.close();
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(r.refusals, ["UPSTREAM_UNREACHABLE"]);
});

Deno.test("resolveHost() flags names whose answers are private and failed lookups", async () => {
  const fake = (answers: Record<string, string[]>) => (h: string) =>
    answers[h] ? Promise.resolve(answers[h]) : Promise.reject(new Error("NXDOMAIN"));
  const resolve = fake({
    "rebind.test": ["93.184.216.34", "127.0.0.1"],
    "pub.test": ["93.184.216.34"],
  });
  assert.equal((await resolveHost("rebind.test", resolve)).privateAddress, true);
  assert.deepEqual(await resolveHost("pub.test", resolve), {
    addresses: ["93.184.216.34"],
    privateAddress: false,
    failed: false,
  });
  assert.equal((await resolveHost("gone.test", resolve)).failed, true);
  assert.equal((await resolveHost("localhost", resolve)).privateAddress, true);
  assert.deepEqual((await resolveHost("[::1]", resolve)).addresses, ["::1"]);
});

Deno.test("serveProxy() looks a name up only after an allow, and needs an exact listing for a private answer", async () => {
  const looked: string[] = [];
  const resolve = (h: string) => {
    looked.push(h);
    return h === "gone.test"
      ? Promise.reject(new Error("NXDOMAIN"))
      : Promise.resolve(["127.0.0.1"]);
  };
  await using r = rig((q) => q.type === "connect" && q.host !== "denied.test", {
    exact: false,
    resolve,
  });
  const denied = await exchange(r.port, "CONNECT denied.test:443 HTTP/1.1\r\n\r\n");
  assert.match(denied, /X-Omotai-Deny: ORIGIN_NOT_ALLOWED/);
  assert.deepEqual(looked, [], "a refused name is never looked up (no DNS exfiltration)");
  const rebound = await exchange(r.port, `CONNECT rebind.test:${r.upstreamPort} HTTP/1.1\r\n\r\n`);
  assert.match(rebound, /X-Omotai-Deny: PRIVATE_ADDRESS/);
  const gone = await exchange(r.port, "CONNECT gone.test:443 HTTP/1.1\r\n\r\n");
  assert.match(gone, /X-Omotai-Deny: DNS_FAILED/);
  assert.deepEqual(looked, ["rebind.test", "gone.test"]);
  assert.deepEqual(r.refusals, ["PRIVATE_ADDRESS", "DNS_FAILED"]);
  assert.deepEqual(r.upstreamSeen, []);
});

Deno.test("serveProxy() reads heads of any size up to its cap, and refuses larger ones", async () => {
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${r.upstreamPort}`;
  const big = "x".repeat(20_000);
  const ok = await exchange(
    r.port,
    `GET ${target}/big HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ${big}\r\n\r\n`,
  );
  assert.match(ok, /^HTTP\/1\.1 200/);
  const huge = "y".repeat(70_000);
  const refused = await exchange(
    r.port,
    `GET ${target}/huge HTTP/1.1\r\nHost: x\r\nX-Huge: ${huge}\r\n\r\n`,
  );
  assert.match(refused, /^HTTP\/1\.1 400/);
  assert.deepEqual(r.upstreamSeen, ["GET /big "]);
  assert.deepEqual(r.refusals, ["BAD_REQUEST"]);
});
