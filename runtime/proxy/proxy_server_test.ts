import assert from "node:assert/strict";
import {
  exchange,
  recordingProxy,
  recordingUpstream,
} from "../../tests/helpers/recording_proxy.ts";
import { MAX_HELD_BODY, type ProxyQuestion } from "./proxy_protocol.ts";
import { resolveHost } from "./proxy_decide.ts";
import { UPSTREAM_ANSWER_MS } from "./request_head.ts";
import { UpstreamWaits } from "./upstream_waits.ts";
import { until } from "../../tests/helpers/until.ts";

interface Rig extends AsyncDisposable {
  port: number;
  upstreamPort: number;
  upstreamSeen: string[];
  questions: ProxyQuestion[];
  refusals: string[];
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function rig(
  allow: (q: ProxyQuestion) => boolean,
  options: {
    exact?: boolean;
    resolve?: (h: string) => Promise<string[]>;
    upstreamAnswerMs?: number;
  } = {},
): Rig {
  const upstream = recordingUpstream(() => new Response("hello", { headers: { "x-up": "1" } }));
  const proxy = recordingProxy({
    ask: (q) =>
      Promise.resolve(
        allow(q) ? { allow: true, reason: "OK", exact: options.exact ?? true } : {
          allow: false,
          reason: "ORIGIN_NOT_ALLOWED",
          exact: false,
        },
      ),
    resolve: options.resolve,
    upstreamAnswerMs: options.upstreamAnswerMs,
  });
  return {
    port: proxy.port,
    upstreamPort: upstream.port,
    upstreamSeen: upstream.seen,
    questions: proxy.asked,
    refusals: proxy.refused,
    async [Symbol.asyncDispose]() {
      await proxy[Symbol.asyncDispose]();
      await upstream[Symbol.asyncDispose]();
    },
  };
}

Deno.test("serveProxy() judges each request of a kept-alive connection on its own", async () => {
  await using r = rig((q) => !(q.type === "http" && q.url.endsWith("/smuggled")));
  const target = `http://127.0.0.1:${r.upstreamPort}`;
  // A second request pipelined behind the first is read and judged on its own: refused here,
  // and the connection carries a third (bodiless refusals keep it).
  const out = await exchange(
    r.port,
    `POST ${target}/a?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nProxy-Connection: keep-alive\r\n\r\nbody` +
      `POST ${target}/smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n` +
      `GET ${target}/after HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
  );
  assert.match(out, /^HTTP\/1\.1 200/);
  assert.match(out, /Connection: keep-alive/i);
  assert.match(out, /hello(?=HTTP\/1\.1 403)/, "the body, then the refusal of the second");
  assert.match(out, /X-Omotai-Deny: ORIGIN_NOT_ALLOWED\r\n\r\nHTTP\/1\.1 200[^]*hello$/);
  assert.match(out, /403 Forbidden\r\nContent-Length: 0\r\nConnection: keep-alive/);
  assert.deepEqual(r.upstreamSeen, ["POST /a body", "GET /after "]);
  // Each write is asked about with the exact body it would send (headers: their own test).
  assert.deepEqual(r.questions.map((q) => ({ ...q, headers: undefined })).map(dropUndefined), [
    {
      type: "http",
      method: "POST",
      url: `${target}/a?x=1`,
      body: { contentType: null, base64: btoa("body") },
    },
    {
      type: "http",
      method: "POST",
      url: `${target}/smuggled`,
      body: { contentType: null, base64: "" },
    },
    { type: "http", method: "GET", url: `${target}/after` },
  ]);
});

Deno.test("serveProxy() holds a write whole: the body asked about is the body sent, once", async () => {
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${r.upstreamPort}`;
  const body = "amount=10&to=alice&" + "x".repeat(200_000);
  const out = await exchange(
    r.port,
    `POST ${target}/pay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  );
  assert.match(out, /^HTTP\/1\.1 200/);
  const q = r.questions[0];
  assert.ok(q.type === "http" && q.body);
  assert.equal(q.body.contentType, "application/x-www-form-urlencoded");
  assert.equal(new TextDecoder().decode(Uint8Array.fromBase64(q.body.base64)), body);
  assert.deepEqual(r.upstreamSeen, [`POST /pay ${body}`]);
});

Deno.test("serveProxy() refuses a body too large to hold (413) and sends none of it", async () => {
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${r.upstreamPort}`;
  const out = await exchange(
    r.port,
    `POST ${target}/up HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${
      MAX_HELD_BODY + 1
    }\r\n\r\nabc`,
  );
  assert.match(out, /^HTTP\/1\.1 413/);
  assert.match(out, /X-Omotai-Deny: BODY_TOO_LARGE/);
  assert.deepEqual(r.upstreamSeen, []);
  assert.deepEqual(r.questions, []);
  const signed = await exchange(
    r.port,
    `POST ${target}/up HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: +4\r\n\r\nabcd`,
  );
  assert.match(signed, /^HTTP\/1\.1 400/);
  assert.deepEqual(r.upstreamSeen, []);
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
    `GET http://127.0.0.1:${r.upstreamPort}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
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
    `GET http://127.0.0.1:${deadPort}/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
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

/** A raw upstream: counts connections and answers each request head with `answer`. */
function rawUpstream(
  answer: (requestLine: string, conn: number) => { text: string; close?: boolean },
): { port: number; connections: () => number; seen: string[] } & AsyncDisposable {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: string[] = [];
  const open = new Set<Deno.Conn>();
  let connections = 0;
  const serveConn = async (conn: Deno.Conn, n: number) => {
    const buf = new Uint8Array(16 * 1024);
    let text = "";
    try {
      for (;;) {
        const got = await conn.read(buf);
        if (got === null) return;
        text += new TextDecoder().decode(buf.subarray(0, got));
        let end: number;
        while ((end = text.indexOf("\r\n\r\n")) >= 0) {
          const head = text.slice(0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (text.length < end + 4 + length) break;
          const line = head.split("\r\n")[0];
          seen.push(`${line} ${text.slice(end + 4, end + 4 + length)}`.trim());
          text = text.slice(end + 4 + length);
          const a = answer(line, n);
          await conn.write(new TextEncoder().encode(a.text));
          if (a.close) return;
        }
      }
    } catch {
      /* the proxy went away */
    } finally {
      open.delete(conn);
      try {
        conn.close();
      } catch { /* closed */ }
    }
  };
  const accepting = (async () => {
    for await (const conn of listener) {
      open.add(conn);
      serveConn(conn, ++connections);
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    connections: () => connections,
    seen,
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await accepting.catch(() => {});
    },
  };
}

const ok = (body: string) => `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

Deno.test("serveProxy() carries the next judged GET of a session on the kept upstream connection", async () => {
  await using up = rawUpstream((line) => ({ text: ok(line.split(" ")[1]) }));
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${up.port}`;
  const get = (path: string) => `GET ${target}${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
  // Two browser connections one after the other: the second finds the first's upstream.
  const first = await exchange(
    r.port,
    get("/a") + get("/b").replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"),
  );
  assert.match(first, /\/a(?=HTTP\/1\.1 200)/);
  assert.match(first, /\/b$/);
  const second = await exchange(
    r.port,
    get("/c").replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n"),
  );
  assert.match(second, /\/c$/);
  assert.deepEqual(up.seen, ["GET /a HTTP/1.1", "GET /b HTTP/1.1", "GET /c HTTP/1.1"]);
  assert.equal(up.connections(), 1, "one upstream connection for three judged requests");
  assert.equal(r.questions.length, 3, "each request was judged on its own");
});

Deno.test("serveProxy() sends a GET again on a fresh connection when the kept one went stale, never a body", async () => {
  // A rude upstream: it closes after every answer without saying so.
  await using up = rawUpstream((line) => ({ text: ok(line.split(" ")[1]), close: true }));
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${up.port}`;
  const closing = "Connection: close\r\n\r\n";
  assert.match(await exchange(r.port, `GET ${target}/1 HTTP/1.1\r\nHost: x\r\n${closing}`), /\/1$/);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.match(await exchange(r.port, `GET ${target}/2 HTTP/1.1\r\nHost: x\r\n${closing}`), /\/2$/);
  const post = await exchange(
    r.port,
    `POST ${target}/w HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n${closing}body`,
  );
  assert.match(post, /\/w$/);
  assert.deepEqual(up.seen, ["GET /1 HTTP/1.1", "GET /2 HTTP/1.1", "POST /w HTTP/1.1 body"]);
  assert.equal(up.connections(), 3);
});

Deno.test("serveProxy() relays early hints and a chunked body, and keeps both connections", async () => {
  await using up = rawUpstream((line) => ({
    text: "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" +
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
      `3\r\nabc\r\n${line.includes("/two") ? "2\r\nde\r\n" : ""}0\r\nX-T: 1\r\n\r\n`,
  }));
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${up.port}`;
  const out = await exchange(
    r.port,
    `GET ${target}/one HTTP/1.1\r\nHost: x\r\n\r\nGET ${target}/two HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  );
  const responses = out.split(/(?=HTTP\/1\.1 )/);
  assert.equal(responses.length, 4, out);
  assert.match(responses[0], /^HTTP\/1\.1 103[^]*Link: <\/s\.css>/);
  assert.doesNotMatch(
    responses[0],
    /Connection:/,
    "an interim head says nothing of the connection",
  );
  assert.match(responses[1], /Connection: keep-alive[^]*\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n$/);
  assert.match(responses[3], /Connection: close[^]*3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n$/);
  assert.equal(up.connections(), 1);
});

Deno.test("serveProxy() refuses a response it cannot delimit, and strips a forged deny header", async () => {
  await using up = rawUpstream((line) => ({
    text: line.includes("/smuggle")
      ? "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
      : "HTTP/1.1 200 OK\r\nX-Omotai-Deny: ORIGIN_NOT_ALLOWED\r\nContent-Length: 2\r\n\r\nok",
  }));
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${up.port}`;
  const out = await exchange(r.port, `GET ${target}/smuggle HTTP/1.1\r\nHost: x\r\n\r\n`);
  assert.match(out, /^HTTP\/1\.1 502/);
  assert.match(out, /X-Omotai-Deny: UPSTREAM_BAD_RESPONSE/);
  assert.deepEqual(r.refusals, ["UPSTREAM_BAD_RESPONSE"]);
  const forged = await exchange(
    r.port,
    `GET ${target}/forged HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
  );
  assert.match(forged, /^HTTP\/1\.1 200/);
  assert.doesNotMatch(forged, /X-Omotai/i, "only the proxy speaks for the proxy");
});

Deno.test("serveProxy() refuses framing an upstream could read otherwise: two lengths, a name that is no token, an empty Transfer-Encoding", async () => {
  await using r = rig(() => true);
  const target = `http://127.0.0.1:${r.upstreamPort}`;
  const cases: [string, RegExp][] = [
    [`Content-Length: 4\r\nContent-Length: 40\r\n`, /^HTTP\/1\.1 400/],
    [`Content-Length : 40\r\nContent-Length: 4\r\n`, /^HTTP\/1\.1 400/],
    [`Transfer-Encoding:\r\nContent-Length: 4\r\n`, /^HTTP\/1\.1 411/],
  ];
  for (const [headers, status] of cases) {
    const out = await exchange(
      r.port,
      `POST ${target}/x HTTP/1.1\r\nHost: 127.0.0.1\r\n${headers}Connection: close\r\n\r\nbody`,
    );
    assert.match(out, status, headers);
  }
  assert.deepEqual(r.upstreamSeen, []);
  // A question carries the headers it would send (no Proxy-* ones).
  await exchange(
    r.port,
    `GET ${target}/h HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: x/y\r\nProxy-Authorization: z\r\nConnection: close\r\n\r\n`,
  );
  const q = r.questions.at(-1)!;
  assert.ok(q.type === "http");
  assert.deepEqual(q.headers, [["Host", "127.0.0.1"], ["Accept", "x/y"], [
    "Connection",
    "close",
  ]]);
});

/** An upstream that reads each request and answers `head` (nothing at all by default), then nothing more. */
const silentUpstream = (head = "") => rawUpstream(() => ({ text: head }));

Deno.test("serveProxy() answers 504 UPSTREAM_TIMEOUT for an upstream that never answers, and sends the request once", async () => {
  await using silent = silentUpstream();
  // The mechanism under a short bound; the production bound is checked below.
  await using r = rig(() => true, { upstreamAnswerMs: 2_000 });
  const out = await exchange(
    r.port,
    `GET http://127.0.0.1:${silent.port}/never HTTP/1.1\r\nHost: x\r\n\r\n`,
  );
  assert.match(out, /^HTTP\/1\.1 504 Gateway Timeout/);
  assert.match(out, /X-Omotai-Deny: UPSTREAM_TIMEOUT/);
  assert.deepEqual(r.refusals, ["UPSTREAM_TIMEOUT"]);
  assert.equal(silent.connections(), 1, "sent once: never again on a fresh connection");
});

Deno.test("UPSTREAM_ANSWER_MS gives an upstream 30 s to start its answer unless a listener is told otherwise", () => {
  assert.equal(UPSTREAM_ANSWER_MS, 30_000);
});

const allowAll = () => Promise.resolve({ allow: true, reason: "OK", exact: true });

Deno.test("serveProxy() answers 504 UPSTREAM_RELEASED to the upstream waits a release reaches; younger waits and another listener's are left", async () => {
  await using silent = silentUpstream();
  // The proxy's count of the runtime's lines, as proxy_main.ts keeps it.
  let line = 1;
  const waitsA = new UpstreamWaits(() => line);
  const waitsB = new UpstreamWaits(() => line);
  await using a = recordingProxy({ ask: allowAll, waits: waitsA });
  await using b = recordingProxy({ ask: allowAll, waits: waitsB });
  const get = (p: { port: number }, path: string) =>
    exchange(p.port, `GET http://127.0.0.1:${silent.port}${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  const old = get(a, "/old");
  const other = get(b, "/other");
  await until(() => waitsA.size === 1 && waitsB.size === 1);
  line = 2; // the runtime's mark: 1 (a navigation began); what is judged from here is younger
  const young = get(a, "/young");
  await until(() => waitsA.size === 2 && silent.connections() === 3);
  assert.equal(waitsA.release(1), 1);
  const out = await old;
  assert.match(out, /^HTTP\/1\.1 504 Gateway Timeout/);
  assert.match(out, /X-Omotai-Deny: UPSTREAM_RELEASED/);
  assert.deepEqual(a.refused, ["UPSTREAM_RELEASED"]);
  assert.equal(waitsA.size, 1, "the younger wait goes on");
  assert.equal(waitsB.size, 1, "another listener's wait goes on");
  assert.deepEqual(b.refused, []);
  assert.equal(silent.connections(), 3, "the released request was never sent again");
  // The younger one is released by a later mark.
  assert.equal(waitsA.release(2), 1);
  assert.match(await young, /X-Omotai-Deny: UPSTREAM_RELEASED/);
  assert.equal(waitsB.release(2), 1);
  assert.match(await other, /X-Omotai-Deny: UPSTREAM_RELEASED/);
});

Deno.test("serveProxy() never releases a write waiting for its judgement; once allowed and sent upstream, its wait is released", async () => {
  await using silent = silentUpstream();
  const waits = new UpstreamWaits(() => 1);
  let judge: (allow: boolean) => void = () => {};
  await using p = recordingProxy({
    ask: () =>
      new Promise((resolve) => {
        judge = (allow) => resolve({ allow, reason: "OK", exact: true });
      }),
    waits,
  });
  const write = exchange(
    p.port,
    `POST http://127.0.0.1:${silent.port}/w HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi`,
  );
  await until(() => p.asked.length === 1);
  assert.equal(waits.release(Number.MAX_SAFE_INTEGER), 0, "a judgement is no upstream wait");
  judge(true);
  await until(() => waits.size === 1 && silent.connections() === 1);
  assert.equal(waits.release(1), 1);
  assert.match(await write, /X-Omotai-Deny: UPSTREAM_RELEASED/);
  assert.deepEqual(p.refused, ["UPSTREAM_RELEASED"]);
});

Deno.test("serveProxy() cuts short a released wait whose answer's head was relayed: no 504 after it", async () => {
  await using trickle = silentUpstream("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc");
  const waits = new UpstreamWaits(() => 1);
  await using p = recordingProxy({ ask: allowAll, waits });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: p.port });
  await conn.write(
    new TextEncoder().encode(`GET http://127.0.0.1:${trickle.port}/t HTTP/1.1\r\nHost: x\r\n\r\n`),
  );
  let out = "";
  const buf = new Uint8Array(4096);
  while (!out.endsWith("abc")) {
    const n = await conn.read(buf);
    assert.ok(n !== null, "the head and the first bytes came");
    out += new TextDecoder().decode(buf.subarray(0, n));
  }
  assert.equal(waits.release(1), 1);
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    out += new TextDecoder().decode(buf.subarray(0, n));
  }
  conn.close();
  assert.match(out, /^HTTP\/1\.1 200 OK/);
  assert.doesNotMatch(out, /504|X-Omotai-Deny/);
  assert.deepEqual(p.refused, ["UPSTREAM_RELEASED"]);
});
