import "reflect-metadata";
import assert from "node:assert/strict";
import * as x509 from "@peculiar/x509";
import {
  type RecordingProxy,
  recordingProxy,
  type RecordingUpstream,
  recordingUpstream,
} from "../../tests/helpers/recording_proxy.ts";
import { TlsAuthority } from "../egress/tls_authority.ts";
import type { ProxyAnswer, ProxyQuestion } from "./proxy_protocol.ts";
import { UpstreamWaits } from "./upstream_waits.ts";

/** An HTTPS server on 127.0.0.1 with `cert`/`key`, recording what reached it. */
function https(cert: string, key: string): RecordingUpstream {
  return recordingUpstream(() => new Response("upstream says hi"), { cert, key });
}

function proxy(
  authority: TlsAuthority,
  upstreamCa: string[] | undefined,
  answer: (q: ProxyQuestion) => ProxyAnswer = () => ({ allow: true, reason: "OK", exact: true }),
): RecordingProxy {
  return recordingProxy({
    ask: (q) => Promise.resolve(answer(q)),
    tls: { leaf: (h) => authority.leafFor(h), upstreamCa },
  });
}

/** Sends one HTTPS request through the proxy as Chromium would; the raw response text. */
async function through(
  p: RecordingProxy,
  authority: TlsAuthority,
  port: number,
  request: string,
): Promise<string> {
  const tcp = await Deno.connect({ hostname: "127.0.0.1", port: p.port });
  await tcp.write(new TextEncoder().encode(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`));
  const buf = new Uint8Array(4096);
  const n = await tcp.read(buf);
  const established = new TextDecoder().decode(buf.subarray(0, n ?? 0));
  if (!established.startsWith("HTTP/1.1 200")) {
    tcp.close();
    return established;
  }
  const tls = await Deno.startTls(tcp, { hostname: "127.0.0.1", caCerts: [authority.certPem] });
  await tls.write(new TextEncoder().encode(request));
  let out = "";
  for (;;) {
    const m = await tls.read(buf).catch(() => null);
    if (m === null) break;
    out += new TextDecoder().decode(buf.subarray(0, m));
  }
  try {
    tls.close();
  } catch { /* closed */ }
  return out;
}

const POST = (port: number) =>
  `POST /orders/cancel?id=4471 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi`;

Deno.test("serveProxy() terminates TLS in a tunnel and judges the request inside whole", async () => {
  const proxyCa = await TlsAuthority.create();
  const siteCa = await TlsAuthority.create();
  const leaf = await siteCa.leafFor("127.0.0.1");
  await using site = https(leaf.cert, leaf.key);
  await using p = proxy(proxyCa, [siteCa.certPem]);
  const res = await through(p, proxyCa, site.port, POST(site.port));
  assert.match(res, /^HTTP\/1\.1 200/);
  assert.match(res, /upstream says hi/);
  assert.deepEqual(site.seen, ["POST /orders/cancel hi"]);
  assert.deepEqual(p.asked.map((q) => q.type === "http" ? `${q.method} ${q.url}` : q.type), [
    "connect",
    `POST https://127.0.0.1:${site.port}/orders/cancel?id=4471`,
  ]);
});

Deno.test("serveProxy() refuses a request inside an allowed tunnel; nothing reaches the site", async () => {
  const proxyCa = await TlsAuthority.create();
  const siteCa = await TlsAuthority.create();
  const leaf = await siteCa.leafFor("127.0.0.1");
  await using site = https(leaf.cert, leaf.key);
  await using p = proxy(
    proxyCa,
    [siteCa.certPem],
    (q) =>
      q.type === "http" && q.upgrade
        ? { allow: false, reason: "WEBSOCKET_REFUSED", exact: true }
        : q.type === "http" && q.method !== "GET"
        ? { allow: false, reason: "READ_ONLY_WRITE", exact: true }
        : { allow: true, reason: "OK", exact: true },
  );
  const res = await through(p, proxyCa, site.port, POST(site.port));
  assert.match(res, /^HTTP\/1\.1 403/);
  assert.match(res, /X-Omotai-Deny: READ_ONLY_WRITE/);
  assert.deepEqual(site.seen, []);
  // A WebSocket handshake is asked about with its upgrade.
  const ws = await through(
    p,
    proxyCa,
    site.port,
    `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${site.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  assert.match(ws, /X-Omotai-Deny: WEBSOCKET_REFUSED/);
  assert.deepEqual(site.seen, [], "the handshake never reached the site");
  const upgrade = p.asked.find((q) => q.type === "http" && q.upgrade);
  assert.equal(upgrade?.type === "http" ? upgrade.upgrade : undefined, "websocket");
});

Deno.test("serveProxy() refuses upstreams whose certificate is for another name, from an unknown CA, or expired", async () => {
  const proxyCa = await TlsAuthority.create();
  const siteCa = await TlsAuthority.create();
  const expired = await expiredLeaf();
  const cases: [string, { cert: string; key: string }, string[] | undefined][] = [
    ["UPSTREAM_CERT_NAME", await siteCa.leafFor("other.test"), [siteCa.certPem]],
    ["UPSTREAM_CERT_UNTRUSTED", await siteCa.leafFor("127.0.0.1"), undefined],
    ["UPSTREAM_CERT_EXPIRED", expired, [expired.ca]],
  ];
  for (const [reason, leaf, roots] of cases) {
    await using site = https(leaf.cert, leaf.key);
    await using p = proxy(proxyCa, roots);
    const res = await through(
      p,
      proxyCa,
      site.port,
      `GET / HTTP/1.1\r\nHost: 127.0.0.1:${site.port}\r\nConnection: close\r\n\r\n`,
    );
    assert.match(res, /^HTTP\/1\.1 502/, reason);
    assert.match(res, new RegExp(`X-Omotai-Deny: ${reason}`), res);
    assert.deepEqual(p.refused, [reason]);
    assert.deepEqual(site.seen, [], "no request reached a server the proxy could not verify");
  }
});

Deno.test("serveProxy() releases an upstream wait inside a TLS-terminated tunnel: 504 UPSTREAM_RELEASED in the tunnel", async () => {
  const proxyCa = await TlsAuthority.create();
  const siteCa = await TlsAuthority.create();
  const leaf = await siteCa.leafFor("127.0.0.1");
  // An HTTPS site that never answers (until the test ends).
  const { promise: end, resolve: ended } = Promise.withResolvers<void>();
  const site = Deno.serve(
    { hostname: "127.0.0.1", port: 0, ...leaf, onListen: () => {} },
    async () => {
      await end;
      return new Response("late");
    },
  );
  const waits = new UpstreamWaits(() => 1);
  try {
    await using p = recordingProxy({
      ask: () => Promise.resolve({ allow: true, reason: "OK", exact: true }),
      tls: { leaf: (h) => proxyCa.leafFor(h), upstreamCa: [siteCa.certPem] },
      waits,
    });
    const res = through(
      p,
      proxyCa,
      site.addr.port,
      `GET /never HTTP/1.1\r\nHost: 127.0.0.1:${site.addr.port}\r\n\r\n`,
    );
    while (waits.size === 0) await new Promise((r) => setTimeout(r, 10));
    assert.equal(waits.release(1), 1);
    const out = await res;
    assert.match(out, /^HTTP\/1\.1 504/);
    assert.match(out, /X-Omotai-Deny: UPSTREAM_RELEASED/);
    assert.deepEqual(p.refused, ["UPSTREAM_RELEASED"]);
  } finally {
    ended();
    await site.shutdown();
  }
});

/** A leaf for 127.0.0.1 that expired yesterday, with its own CA (`ca`). */
async function expiredLeaf(): Promise<{ cert: string; key: string; ca: string }> {
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const caKeys = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: "0a",
    name: "CN=expired test CA",
    notBefore: new Date(Date.now() - 10 * 86_400_000),
    notAfter: new Date(Date.now() + 10 * 86_400_000),
    keys: caKeys,
    signingAlgorithm: alg,
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  const keys = await crypto.subtle.generateKey(alg, true, ["sign", "verify"]) as CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: "0b",
    subject: "CN=127.0.0.1",
    issuer: ca.subject,
    notBefore: new Date(Date.now() - 5 * 86_400_000),
    notAfter: new Date(Date.now() - 86_400_000),
    signingKey: caKeys.privateKey,
    publicKey: keys.publicKey,
    signingAlgorithm: alg,
    extensions: [new x509.SubjectAlternativeNameExtension([{ type: "ip", value: "127.0.0.1" }])],
  });
  const key = x509.PemConverter.encode(
    await crypto.subtle.exportKey("pkcs8", keys.privateKey),
    "PRIVATE KEY",
  );
  return { cert: leaf.toString("pem") + "\n" + ca.toString("pem"), key, ca: ca.toString("pem") };
}
