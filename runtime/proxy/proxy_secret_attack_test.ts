/**
 * Red-team vectors (issue 19) through the real egress path: proxy server → proxy judge →
 * boundary (bundled baseline policy) → write hold, against a raw upstream that records the
 * exact bytes it receives. Each vector once got through; each is now refused or shown.
 *
 * The requests are ones Chromium sends for a page's script (no forged framing):
 * - headers a page sets or makes the browser set: `fetch(url, {mode: "no-cors", headers:
 *   {Accept: pw}})` (Accept is CORS-safelisted), `fetch(url, {referrer: "/?" + pw,
 *   referrerPolicy: "unsafe-url"})` (Referer), `document.cookie = "k=" + pw` (Cookie);
 * - a custom header on a same-origin fetch (`X-HTTP-Method-Override`), a non-standard
 *   method Chromium does not upper-case (`fetch(url, {method: "patch"})`).
 */
import assert from "node:assert/strict";
import { testBoundary } from "../../tests/helpers/boundary.ts";
import { exchange, recordingProxy } from "../../tests/helpers/recording_proxy.ts";
import type { HeldWrite } from "../gate/write_hold.ts";
import { requestView } from "../net/request_view.ts";
import { FRESH_SESSION } from "../policy/fact_builders.ts";
import { carriesEgressSecret, egressSecrets } from "../redact/egress_secrets.ts";
import { proxyJudge } from "../egress/proxy_judge.ts";

const PASSWORD = "Tr0ub4dor&3-horse";

/** An upstream that records each request's raw bytes (head and Content-Length body). */
function rawUpstream() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: string[] = [];
  const serving = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(1 << 16);
        let text = "";
        for (;;) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
          text += new TextDecoder("latin1").decode(buf.subarray(0, n));
          const end = text.indexOf("\r\n\r\n");
          if (end < 0) continue;
          const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(text)?.[1] ?? "0");
          if (text.length < end + 4 + len) continue;
          seen.push(text.slice(0, end + 4 + len));
          text = text.slice(end + 4 + len);
          await conn.write(
            new TextEncoder().encode(
              "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
            ),
          ).catch(() => {});
          break;
        }
        try {
          conn.close();
        } catch { /* closed */ }
      })();
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    seen,
    close: async () => {
      listener.close();
      await serving.catch(() => {});
    },
  };
}

async function rig(readOnly: boolean) {
  const up = rawUpstream();
  const origin = `http://127.0.0.1:${up.port}`;
  const built = await boundaryFor(origin, readOnly);
  const boundary = built.boundary;
  const judge = proxyJudge({
    boundary,
    session: () => ({ id: "s-1", agent: "red" }),
    counters: () => FRESH_SESSION,
  });
  const proxy = recordingProxy({ ask: judge.ask, refused: judge.refused });
  return {
    boundary,
    origin,
    up,
    /** Sends one request through the proxy; the status line of its answer. */
    async send(raw: string): Promise<string> {
      return (await exchange(proxy.port, raw)).split("\r\n")[0];
    },
    async [Symbol.asyncDispose]() {
      await proxy[Symbol.asyncDispose]();
      await up.close();
      await built[Symbol.asyncDispose]();
    },
  };
}

/**
 * The bundled baseline allowing `origin` only, guarding {@link PASSWORD} in every request;
 * with `sockets`, the policy lists `origin` for WebSockets too (`websockets:`).
 */
function boundaryFor(origin: string, readOnly: boolean, sockets = false) {
  egressSecrets().add([PASSWORD]);
  return testBoundary({
    allowed: [origin],
    config: { read_only: readOnly },
    domains: false,
    audit: false,
    secretIn: carriesEgressSecret,
    ...(sockets ? { websockets: { readOnly, allowed: [origin] } } : {}),
  });
}

const get = (url: string, extra: string) =>
  `GET ${url} HTTP/1.1\r\nHost: ${new URL(url).host}\r\n${extra}Connection: close\r\n\r\n`;

Deno.test("serveProxy() attack: a guarded password in a header (Referer, Accept, Cookie) is refused (SECRET_IN_REQUEST)", async () => {
  await using r = await rig(true);
  const url = `${r.origin}/pixel.gif`;
  // Control: in the URL it is refused.
  assert.match(await r.send(get(`${url}?p=${encodeURIComponent(PASSWORD)}`, "")), / 403 /);
  // In a header too: the question carries the headers, and each is searched.
  const pw = encodeURIComponent(PASSWORD);
  assert.match(
    await r.send(get(url, `Referer: https://login.example/signin?u=${pw}\r\n`)),
    / 403 /,
  );
  assert.match(await r.send(get(url, `Accept: x/${pw}\r\n`)), / 403 /);
  assert.match(await r.send(get(url, `Cookie: k=${PASSWORD}\r\n`)), / 403 /);
  assert.equal(await r.send(get(url, `Accept: text/html\r\n`)).then((l) => / 200 /.test(l)), true);
  assert.equal(r.up.seen.length, 1, "only the request without the password left");
});

Deno.test("serveProxy() attack: the operator is shown the headers a page set and the method as sent", async () => {
  await using r = await rig(true);
  const shown: ReturnType<typeof requestView>[] = [];
  // An action hold that shows the held write to an operator who approves what they see.
  const close = r.boundary.openHold("s-1", {
    strict: false,
    judge(write: HeldWrite) {
      shown.push(requestView(write, (t) => t));
      return Promise.resolve({ decision: "allow", reason: "APPROVED", module: "approval" });
    },
  });
  const body = "nickname=bob";
  const post = (method: string, extra: string) =>
    `${method} ${r.origin}/api/accounts/42 HTTP/1.1\r\nHost: 127.0.0.1:${r.up.port}\r\n` +
    `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n` +
    `${extra}Connection: close\r\n\r\n${body}`;
  assert.match(
    await r.send(post("POST", "X-HTTP-Method-Override: DELETE\r\nCookie: acct=victim-2\r\n")),
    / 200 /,
  );
  assert.match(await r.send(post("patch", "")), / 200 /);
  close();
  // Shown: the method as the page spelled it, and the override and cookie it set.
  assert.deepEqual(shown.map((v) => v.method), ["POST", "patch"]);
  const headers = shown[0].headers.map((h) => [h.name.text, h.value.text]);
  assert.deepEqual(headers, [["X-HTTP-Method-Override", "DELETE"], ["Cookie", "acct=victim-2"]]);
  // Sent: exactly what was shown.
  assert.match(r.up.seen[0], /\r\nX-HTTP-Method-Override: DELETE\r\n/);
  assert.match(r.up.seen[0], /\r\nCookie: acct=victim-2\r\n/);
  assert.match(r.up.seen[1], /^patch \/api\/accounts\/42 HTTP\/1\.1\r\n/);
});

Deno.test("serveProxy() attack: no WebSocket opens while a login's strict hold is open", async () => {
  // An upstream that upgrades and records what the socket carries.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const origin = `http://127.0.0.1:${port}`;
  let carried = "";
  const upstream = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(8192);
    let head = "";
    while (!head.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) return;
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    await conn.write(new TextEncoder().encode(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
    ));
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      carried += new TextDecoder().decode(buf.subarray(0, n));
      if (carried.includes(PASSWORD)) break;
    }
    conn.close();
  })();
  // The policy lists the site's socket origin (`websockets:`), as a chat widget needs.
  await using built = await boundaryFor(origin, true, true);
  const boundary = built.boundary;
  const judged: string[] = [];
  // The login's strict hold: it would refuse any write it were asked about.
  const close = boundary.openHold("s-1", {
    strict: true,
    judge(write: HeldWrite) {
      judged.push(`${write.method} ${write.url}`);
      return Promise.resolve({ decision: "deny", reason: "LOGIN_WRITE_MISMATCH", module: "login" });
    },
  });
  const judge = proxyJudge({
    boundary,
    session: () => ({ id: "s-1", agent: "red" }),
    counters: () => FRESH_SESSION,
  });
  const proxy = recordingProxy({ ask: judge.ask, refused: judge.refused });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: proxy.port });
  await conn.write(new TextEncoder().encode(
    `GET ${origin}/chat HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n` +
      `Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n` +
      `Sec-WebSocket-Version: 13\r\n\r\n`,
  ));
  const buf = new Uint8Array(4096);
  const n = await conn.read(buf);
  assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 403/);
  assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /LOGIN_WRITE_MISMATCH/);
  close();
  conn.close();
  await proxy[Symbol.asyncDispose]();
  listener.close();
  await upstream.catch(() => {});
  assert.equal(carried, "", "nothing reached the upstream");
  assert.deepEqual(judged, [], "the strict hold was never asked");
});
