/**
 * The egress proxy's HTTP forward-proxy logic. Chromium is forced through it
 * (`--proxy-server`, loopback not bypassed, non-proxied UDP off), so every connection the
 * browser makes, including WebSocket handshakes and WebRTC's TCP fallback that `Fetch`
 * never sees, arrives here. Each CONNECT tunnel and each plain-HTTP request is resolved,
 * asked about, and only then connected, to the address that was judged (no second lookup,
 * so a DNS answer cannot change between the check and the connect).
 *
 * Nothing after a request's body is read from the browser before that request is answered:
 * every request on a kept-alive connection is judged on its own. A write's body is read
 * whole first and asked about with the request: what is judged (and approved by a human) is
 * exactly what is sent, once. Upstream connections are
 * kept per session (`upstream_pool.ts`) and only ever carry requests that were judged.
 *
 * @module
 */
import { isIpLiteral, isPrivateHost } from "../net/addresses.ts";
import {
  MAX_HELD_BODY,
  type ProxyAnswer,
  type ProxyQuestion,
  type Resolution,
} from "./proxy_protocol.ts";
import { Deadlines } from "./deadlines.ts";
import { type BodyFraming, ChunkedScanner, responseFraming } from "./http_framing.ts";
import { type ByteConn, terminateTls, upstreamTlsReason } from "./tls_terminate.ts";
import { upstreamKey, UpstreamPool } from "./upstream_pool.ts";

/** Asks the runtime about a question. */
export type AskFn = (question: ProxyQuestion) => Promise<ProxyAnswer>;

/** Told when an allowed connection is refused after the lookup. */
export type RefusedFn = (question: ProxyQuestion, reason: string) => void;

/** Resolves a host name; replaceable in tests. */
export type ResolveFn = (host: string) => Promise<string[]>;

const MAX_HEAD = 64 * 1024;
/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Every head read of every listener waits on these. */
const deadlines = new Deadlines();
const HEAD_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * TLS termination inside CONNECT tunnels: the leaf to present for a host (minted by the
 * runtime), and extra roots for verifying upstreams (tests; production uses the system
 * roots and Deno's `DENO_CERT`).
 */
export interface TlsTermination {
  leaf(host: string): Promise<{ cert: string; key: string } | undefined>;
  upstreamCa?: string[];
}

/** How a proxy listener serves. */
export interface ServeOptions {
  /** Without it, a CONNECT tunnel is piped through unread (judged by host and port only). */
  tls?: TlsTermination;
}

interface Ctx {
  ask: AskFn;
  refused: RefusedFn;
  resolve: ResolveFn;
  options: ServeOptions;
  pool: UpstreamPool;
}

/** Accepts connections on `listener` until it closes. */
export async function serveProxy(
  listener: Deno.Listener,
  ask: AskFn,
  refused: RefusedFn = () => {},
  resolve: ResolveFn = defaultResolve,
  options: ServeOptions = {},
): Promise<void> {
  using pool = new UpstreamPool();
  const ctx: Ctx = { ask, refused, resolve, options, pool };
  for await (const conn of listener) {
    // Kept-alive connections carry a head and a body as separate writes: without this,
    // Nagle's algorithm holds the second until the browser's delayed ACK (tens of ms).
    noDelay(conn);
    handle(conn, ctx).catch(() => {}).finally(() => closeQuietly(conn));
  }
}

/**
 * Asks first and looks the name up only after an allow: a lookup of a name the policy
 * refuses would itself carry data to the attacker's DNS server. A private answer needs the
 * exact origin listed; a failed lookup is refused. Returns the address to dial.
 */
async function decide(
  question: ProxyQuestion,
  host: string,
  ask: AskFn,
  refused: RefusedFn,
  resolve: ResolveFn,
): Promise<{ address?: string; reason: string }> {
  const answer = await ask(question);
  if (!answer.allow) return { reason: answer.reason };
  const resolution = await resolveHost(host, resolve);
  const reason = resolution.failed
    ? "DNS_FAILED"
    : resolution.privateAddress && !answer.exact
    ? "PRIVATE_ADDRESS"
    : undefined;
  if (reason) {
    refused(question, reason);
    return { reason };
  }
  return { address: resolution.addresses[0], reason: answer.reason };
}

async function defaultResolve(host: string): Promise<string[]> {
  const out: string[] = [];
  for (const type of ["A", "AAAA"] as const) {
    try {
      out.push(...await Deno.resolveDns(host, type, { signal: AbortSignal.timeout(5_000) }));
    } catch { /* try the other family */ }
  }
  return out;
}

/** Looks up `host` (literals and localhost need no lookup). */
export async function resolveHost(host: string, resolve: ResolveFn): Promise<Resolution> {
  const bare = host.replace(/^\[|\]$/g, "");
  let addresses: string[];
  if (isIpLiteral(bare)) addresses = [bare];
  else if (isPrivateHost(bare)) addresses = ["127.0.0.1"];
  else addresses = await resolve(bare).catch(() => []);
  return {
    addresses,
    privateAddress: isPrivateHost(bare) || addresses.some((a) => isPrivateHost(a)),
    failed: addresses.length === 0,
  };
}

interface Head {
  method: string;
  target: string;
  version: string;
  headers: [string, string][];
  rest: Uint8Array;
}

async function handle(client: ByteConn, ctx: Ctx): Promise<void> {
  const { ask, refused, resolve } = ctx;
  // Every refusal is reported (the runtime audits it), except a connection that closed
  // before sending a byte: Chromium opens and drops spare sockets, and those carry nothing.
  const malformed = async () => {
    refused({ type: "malformed" }, "BAD_REQUEST");
    await reply(client, 400, "BAD_REQUEST");
  };
  const head = await readHead(client);
  if (head === "empty") return;
  if (!head) return await malformed();
  if (head.method === "CONNECT") {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(head.target);
    if (!m) return await malformed();
    const host = m[1].toLowerCase();
    const port = Number(m[2]);
    const question = { type: "connect" as const, host, port };
    const verdict = await decide(question, host, ask, refused, resolve);
    if (!verdict.address) return await reply(client, 403, verdict.reason);
    if (ctx.options.tls) return await openTunnel(client, head, host, port, ctx);
    const upstream = await dial(verdict.address, port);
    if (!upstream) {
      refused(question, "UPSTREAM_UNREACHABLE");
      return await reply(client, 502, "UPSTREAM_UNREACHABLE");
    }
    try {
      await writeAll(client, "HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.rest.length) await writeAllBytes(upstream, head.rest);
      await pipeBoth(client, upstream);
    } finally {
      closeQuietly(upstream);
    }
    return;
  }
  // Plain-HTTP requests one after another on a kept-alive connection, each judged on its own.
  let conn = client;
  let request = head;
  for (;;) {
    let url: URL;
    try {
      url = new URL(request.target);
    } catch {
      return await malformed();
    }
    if (url.protocol !== "http:" && url.protocol !== "ws:") {
      refused({ type: "http", method: request.method, url: url.href }, "BAD_REQUEST");
      return await reply(client, 400, "BAD_REQUEST");
    }
    const kept = await forward(conn, request, url, false, ctx);
    if (!kept) return;
    conn = prefixed(client, kept.next);
    const next = await readHead(conn);
    if (!next || next === "empty" || next.method === "CONNECT") return;
    request = next;
  }
}

/**
 * Judges one request whole (method, full URL, upgrade) and forwards it: over TLS verified
 * against the upstream's name when `secure`, on a kept upstream connection to the judged
 * address when one is idle (a WebSocket upgrade is piped after it is allowed). Returns what
 * the browser sent after the request when its connection may carry another.
 */
async function forward(
  client: ByteConn,
  head: Head,
  url: URL,
  secure: boolean,
  ctx: Ctx,
): Promise<{ next: Uint8Array } | undefined> {
  const { ask, refused, resolve } = ctx;
  const header = (name: string) =>
    head.headers.find(([k]) => k.toLowerCase() === name)?.[1]?.trim();
  const fetchMeta = (name: string) => {
    const v = header(`sec-fetch-${name}`)?.toLowerCase();
    return v && /^[a-z-]{1,32}$/.test(v) ? v : undefined;
  };
  const secFetch: Record<string, string> = {};
  for (const name of ["site", "mode", "dest"]) {
    const v = fetchMeta(name);
    if (v) secFetch[name] = v;
  }
  const question: ProxyQuestion & { type: "http" } = {
    type: "http",
    method: head.method,
    url: url.href,
    ...(header("upgrade") ? { upgrade: header("upgrade")!.toLowerCase().slice(0, 32) } : {}),
    ...(Object.keys(secFetch).length > 0 ? { secFetch } : {}),
  };
  // Streaming uploads would let bytes after the judged request reach the upstream; an empty
  // Transfer-Encoding is one too, to a lenient upstream.
  if (head.headers.some(([k]) => k.toLowerCase() === "transfer-encoding")) {
    refused(question, "CHUNKED_REFUSED");
    return await reply(client, 411, "CHUNKED_REFUSED");
  }
  // What the proxy and an upstream could read differently: a header name that is not a
  // token (`Content-Length :`), a second Content-Length, a length that is not digits.
  const lengths = head.headers.filter(([k]) => k.toLowerCase() === "content-length");
  const lengthHeader = lengths[0]?.[1]?.trim();
  const length = Number(lengthHeader ?? "0");
  if (
    head.headers.some(([k]) => !TOKEN.test(k)) || lengths.length > 1 ||
    !Number.isSafeInteger(length) || length < 0 ||
    (lengthHeader !== undefined && !/^\d+$/.test(lengthHeader))
  ) {
    refused(question, "BAD_REQUEST");
    return await reply(client, 400, "BAD_REQUEST");
  }
  question.headers = head.headers.filter(([k]) => {
    const key = k.toLowerCase();
    return !key.startsWith("proxy-") && key !== "keep-alive";
  });
  // A write is held whole and asked about with its body: the question's bytes are the ones
  // that leave. Reads carry no body.
  const writes = length > 0 || (head.method !== "GET" && head.method !== "HEAD");
  let body: Uint8Array = new Uint8Array();
  let after = head.rest;
  if (writes && !header("upgrade")) {
    if (length > MAX_HELD_BODY) {
      refused(question, "BODY_TOO_LARGE");
      return await reply(client, 413, "BODY_TOO_LARGE");
    }
    const read = await readBody(client, head.rest, length);
    if (!read) return undefined; // the browser went away mid-body: nothing was sent
    body = read.body;
    after = read.next;
    question.body = { contentType: header("content-type") ?? null, base64: body.toBase64() };
  }
  const upgrade = (header("upgrade") ?? "") !== "";
  const keepAlive = head.version === "HTTP/1.1" &&
    (header("connection") ?? header("proxy-connection") ?? "").toLowerCase() !== "close";
  // A refused request without a body was read whole: the browser's connection may carry its
  // next request (judged on its own) instead of being reopened for every refusal of a page.
  const refuse = async (status: number, reason: string) => {
    if (!keepAlive || upgrade) return await reply(client, status, reason);
    await reply(client, status, reason, true);
    return { next: after };
  };
  const verdict = await decide(question, url.hostname, ask, refused, resolve);
  if (!verdict.address) return await refuse(403, verdict.reason);
  const port = Number(url.port || (secure ? 443 : 80));
  const name = url.hostname.replace(/^\[|\]$/g, "");
  const key = upstreamKey(secure, verdict.address, port, name);
  const lines = [`${head.method} ${url.pathname}${url.search} ${head.version}`];
  for (const [k, v] of head.headers) {
    const key = k.toLowerCase();
    if (key.startsWith("proxy-") || key === "keep-alive") continue;
    if (key === "connection" && !upgrade) continue;
    lines.push(`${k}: ${v}`);
  }
  // HTTP/1.1 upstreams keep the connection by default; it returns to the pool after a
  // response whose end was found.
  if (!upgrade && head.version !== "HTTP/1.1") lines.push("Connection: close");
  const requestHead = encoder.encode(lines.join("\r\n") + "\r\n\r\n");
  // Only a request without a body rides a kept connection: when that connection turns out
  // to be stale it is sent again on a fresh one, and a body (a write) is never sent twice.
  const retryable = !upgrade && length === 0 && (head.method === "GET" || head.method === "HEAD");
  let pooled = retryable ? ctx.pool.take(key) : undefined;
  for (;;) {
    const upstream = pooled ?? await openUpstream(verdict.address, port, secure, name, ctx);
    if (typeof upstream === "string") {
      refused(question, upstream);
      return await refuse(502, upstream);
    }
    let keep = false;
    try {
      if (pooled) {
        const sent = await writeAllBytes(upstream, requestHead).then(() => true, () => false);
        if (!sent) {
          pooled = undefined;
          continue;
        }
      } else await writeAllBytes(upstream, requestHead);
      if (upgrade) {
        if (head.rest.length) await writeAllBytes(upstream, head.rest);
        await pipeBoth(client, upstream);
        return;
      }
      if (body.length) await writeAllBytes(upstream, body);
      const next = after;
      const relayed = await relayResponse(upstream, client, keepAlive, head.method);
      if (relayed === "stale") {
        if (pooled) {
          pooled = undefined;
          continue;
        }
        return undefined;
      }
      if (relayed === "invalid") {
        refused(question, "UPSTREAM_BAD_RESPONSE");
        return await reply(client, 502, "UPSTREAM_BAD_RESPONSE");
      }
      keep = relayed.upstream;
      return relayed.client ? { next } : undefined;
    } finally {
      if (keep) ctx.pool.give(key, upstream);
      else closeQuietly(upstream);
    }
  }
}

/**
 * A fresh upstream connection to the judged address: TCP, and TLS verified against the name
 * the browser asked for when `secure`. A string is the reason it could not be made.
 */
async function openUpstream(
  address: string,
  port: number,
  secure: boolean,
  name: string,
  ctx: Ctx,
): Promise<ByteConn | string> {
  const tcp = await dial(address, port);
  if (!tcp) return "UPSTREAM_UNREACHABLE";
  if (!secure) return tcp;
  try {
    const conn = await Deno.startTls(tcp, {
      hostname: name,
      caCerts: ctx.options.tls?.upstreamCa,
      alpnProtocols: ["http/1.1"],
    });
    await conn.handshake();
    return conn;
  } catch (err) {
    closeQuietly(tcp);
    return upstreamTlsReason(err);
  }
}

/** The first byte of a TLS handshake record. */
const TLS_HANDSHAKE = 0x16;

/**
 * The inside of an allowed CONNECT tunnel, read instead of piped: TLS (https, wss) is
 * terminated with the runtime's leaf for the host, plain HTTP (ws: over a tunnel) is read as
 * is, and every request in it is judged whole by {@link forward}. Anything else (a protocol
 * that is not HTTP) is refused: the proxy does not carry what it cannot read.
 */
async function openTunnel(
  client: ByteConn,
  head: Head,
  host: string,
  port: number,
  ctx: Ctx,
): Promise<void> {
  await writeAll(client, "HTTP/1.1 200 Connection Established\r\n\r\n");
  let first = head.rest;
  if (first.length === 0) {
    const buf = new Uint8Array(16 * 1024);
    const n = await client.read(buf).catch(() => null);
    if (n === null) return;
    first = buf.slice(0, n);
  }
  let inner: ByteConn;
  let secure = false;
  if (first[0] === TLS_HANDSHAKE) {
    const leaf = await ctx.options.tls!.leaf(host).catch(() => undefined);
    if (!leaf) {
      ctx.refused({ type: "connect", host, port }, "PROXY_CERT_FAILED");
      return;
    }
    try {
      inner = await terminateTls(client, first, leaf.cert, leaf.key);
    } catch {
      return; // the browser refused the leaf or went away: nothing was sent upstream
    }
    secure = true;
  } else if (/^[A-Z]{3,10} \//.test(latin1.decode(first.subarray(0, 12)))) {
    inner = prefixed(client, first);
  } else {
    ctx.refused({ type: "connect", host, port }, "TUNNEL_NOT_HTTP");
    return;
  }
  try {
    const scheme = secure ? "https" : "http";
    const shownHost = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
    let conn = inner;
    // Requests in the tunnel one after another, each judged on its own.
    for (;;) {
      const req = await readHead(conn);
      if (req === "empty") return;
      if (!req || !req.target.startsWith("/")) {
        ctx.refused({ type: "malformed" }, "BAD_REQUEST");
        return await reply(conn, 400, "BAD_REQUEST");
      }
      let url: URL;
      try {
        url = new URL(`${scheme}://${shownHost}:${port}${req.target}`);
      } catch {
        ctx.refused({ type: "malformed" }, "BAD_REQUEST");
        return await reply(conn, 400, "BAD_REQUEST");
      }
      const kept = await forward(conn, req, url, secure, ctx);
      if (!kept) return;
      conn = prefixed(inner, kept.next);
    }
  } finally {
    closeQuietly(inner);
  }
}

/** `conn` with `first` read back in front of it. */
function prefixed(conn: ByteConn, first: Uint8Array): ByteConn {
  if (first.length === 0) return conn;
  let pending: Uint8Array | null = first;
  return {
    read(p) {
      if (pending) {
        const n = Math.min(p.length, pending.length);
        p.set(pending.subarray(0, n));
        pending = n === pending.length ? null : pending.subarray(n);
        return Promise.resolve(n);
      }
      return conn.read(p);
    },
    write: (p) => conn.write(p),
    close: () => conn.close(),
  };
}

/**
 * Reads exactly `length` bytes of body (after `already`, read with the head); returns it and
 * what the browser sent after it (the start of its next request on a kept-alive connection,
 * judged on its own). Undefined when the browser closed or stalled before the body's end.
 */
async function readBody(
  client: ByteConn,
  already: Uint8Array,
  length: number,
): Promise<{ body: Uint8Array; next: Uint8Array } | undefined> {
  if (already.length >= length) {
    return { body: already.slice(0, length), next: already.subarray(length) };
  }
  const body = new Uint8Array(length);
  body.set(already);
  let got = already.length;
  const wait = deadlines.arm(HEAD_TIMEOUT_MS, () => closeQuietly(client));
  try {
    while (got < length) {
      const n = await client.read(body.subarray(got));
      if (n === null) return undefined;
      got += n;
    }
  } catch {
    return undefined;
  } finally {
    deadlines.cancel(wait);
  }
  return { body, next: new Uint8Array() };
}

/**
 * Relays the response to `method`, interim (1xx) heads included, and finds where its body
 * ends. The browser's connection may carry its next request when it asked to keep it and
 * the end was found; the upstream's may return to the pool when, in addition, the upstream
 * did not ask to close and sent nothing past the end. `"stale"` when the upstream closed
 * before a byte of response (a kept connection the server had given up), `"invalid"` when
 * the response cannot be delimited safely (nothing of it was relayed).
 */
async function relayResponse(
  upstream: ByteConn,
  client: ByteConn,
  keepAlive: boolean,
  method: string,
): Promise<{ client: boolean; upstream: boolean } | "stale" | "invalid"> {
  let from = upstream;
  let interim = false;
  for (;;) {
    const head = await readHead(from);
    if (head === "empty" && !interim) return "stale";
    if (!head || head === "empty") return { client: false, upstream: false };
    const status = Number(head.target);
    const framing = responseFraming(method, status, head.headers);
    // 101 belongs to upgrades, which are piped and never come here.
    if (framing === "invalid" || status === 101 || !Number.isInteger(status)) return "invalid";
    const informational = status >= 100 && status < 200;
    const reuse = keepAlive && framing.kind !== "close";
    const lines = [`${head.method} ${head.target}${head.version ? ` ${head.version}` : ""}`];
    let closing = head.method !== "HTTP/1.1";
    for (const [k, v] of head.headers) {
      const key = k.toLowerCase();
      if (key === "connection" && /(^|,)\s*close\s*($|,)/i.test(v)) closing = true;
      if (key === "connection" || key === "keep-alive" || key.startsWith("proxy-")) continue;
      // The browser's network log reads the proxy's refusals from this header: a site may
      // not forge one.
      if (key === "x-omotai-deny") continue;
      lines.push(`${k}: ${v}`);
    }
    if (!informational) lines.push(reuse ? "Connection: keep-alive" : "Connection: close");
    const bytes = encoder.encode(lines.join("\r\n") + "\r\n\r\n");
    if (informational) {
      await writeAllBytes(client, bytes);
      from = prefixed(upstream, head.rest);
      interim = true;
      continue;
    }
    const body = await relayBody(from, client, framing, bytes, head.rest);
    return {
      client: reuse && body.ended,
      upstream: framing.kind !== "close" && body.ended && body.past === 0 && !closing,
    };
  }
}

/**
 * Sends the response `head`, then copies a body delimited by `framing` from `from` (after
 * `first`, already read) to `to`; the head and what of the body came with it go out as one
 * write. `ended`: the body's end was found; `past`: bytes the upstream sent after it (never
 * relayed).
 */
async function relayBody(
  from: ByteConn,
  to: ByteConn,
  framing: BodyFraming,
  head: Uint8Array,
  first: Uint8Array,
): Promise<{ ended: boolean; past: number }> {
  const withHead = (part: Uint8Array) => writeAllBytes(to, concat(head, part));
  if (framing.kind === "none") {
    await withHead(new Uint8Array());
    return { ended: true, past: first.length };
  }
  // Most bodies of a page's subresources came whole with their head: no buffer for them.
  let buffer: Uint8Array | undefined;
  const buf = () => buffer ??= new Uint8Array(64 * 1024);
  if (framing.kind === "length") {
    let left = framing.length;
    const part = first.subarray(0, Math.min(first.length, left));
    await withHead(part);
    left -= part.length;
    while (left > 0) {
      const b = buf();
      const n = await from.read(b.subarray(0, Math.min(b.length, left)));
      if (n === null) return { ended: false, past: 0 };
      await writeAllBytes(to, b.subarray(0, n));
      left -= n;
    }
    return { ended: true, past: first.length - part.length };
  }
  if (framing.kind === "chunked") {
    const scanner = new ChunkedScanner();
    let bytes = first;
    let headSent = false;
    for (;;) {
      const end = scanner.feed(bytes);
      if (scanner.failed) return { ended: false, past: 0 };
      const part = end >= 0 ? bytes.subarray(0, end) : bytes;
      if (!headSent) await withHead(part);
      else if (part.length) await writeAllBytes(to, part);
      headSent = true;
      if (end >= 0) return { ended: true, past: bytes.length - end };
      const b = buf();
      const n = await from.read(b);
      if (n === null) return { ended: false, past: 0 };
      bytes = b.subarray(0, n);
    }
  }
  await withHead(first);
  for (;;) {
    const b = buf();
    const n = await from.read(b);
    if (n === null) return { ended: false, past: 0 };
    await writeAllBytes(to, b.subarray(0, n));
  }
}

/**
 * Reads up to the blank line; for a response, `method` is the version and `target` the
 * status. `"empty"` when the peer closed (or timed out) before sending a byte, `undefined`
 * when what it sent is not a head.
 */
async function readHead(conn: ByteConn): Promise<Head | "empty" | undefined> {
  // Most heads fit in a few KiB: start small (one per request adds up), grow to the cap.
  let buf = new Uint8Array(4096);
  let len = 0;
  const wait = deadlines.arm(HEAD_TIMEOUT_MS, () => closeQuietly(conn));
  try {
    for (;;) {
      if (len >= buf.length) {
        if (buf.length >= MAX_HEAD) return undefined;
        const grown = new Uint8Array(Math.min(buf.length * 4, MAX_HEAD));
        grown.set(buf);
        buf = grown;
      }
      const n = await conn.read(buf.subarray(len));
      if (n === null) return len === 0 ? "empty" : undefined;
      len += n;
      const end = indexOfBlankLine(buf, len);
      if (end < 0) continue;
      const text = latin1.decode(buf.subarray(0, end));
      const [first, ...rest] = text.split("\r\n");
      const sp1 = first.indexOf(" ");
      const sp2 = first.indexOf(" ", sp1 + 1);
      if (sp1 < 0) return undefined;
      const method = first.slice(0, sp1);
      const target = sp2 < 0 ? first.slice(sp1 + 1) : first.slice(sp1 + 1, sp2);
      const version = sp2 < 0 ? "" : first.slice(sp2 + 1);
      const headers: [string, string][] = [];
      for (const line of rest) {
        const i = line.indexOf(":");
        if (i <= 0) return undefined;
        headers.push([line.slice(0, i), line.slice(i + 1).trim()]);
      }
      return { method, target, version, headers, rest: buf.slice(end + 4, len) };
    }
  } catch {
    return len === 0 ? "empty" : undefined;
  } finally {
    deadlines.cancel(wait);
  }
}

const latin1 = new TextDecoder("latin1");

function indexOfBlankLine(buf: Uint8Array, len: number): number {
  for (let i = 0; i + 3 < len; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}

function noDelay(conn: Deno.Conn): void {
  try {
    (conn as Deno.TcpConn).setNoDelay?.(true);
  } catch { /* not a TCP socket */ }
}

async function dial(address: string, port: number): Promise<Deno.TcpConn | undefined> {
  try {
    const conn = await Deno.connect({
      hostname: address,
      port,
      signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS),
    } as Deno.ConnectOptions);
    noDelay(conn);
    return conn;
  } catch {
    return undefined;
  }
}

async function pipeBoth(a: ByteConn, b: ByteConn): Promise<void> {
  const copy = async (from: ByteConn, to: ByteConn) => {
    const buf = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await from.read(buf);
        if (n === null) break;
        await writeAllBytes(to, buf.subarray(0, n));
      }
    } catch { /* either side went away */ }
    closeQuietly(to);
    closeQuietly(from);
  };
  await Promise.all([copy(a, b), copy(b, a)]);
}

async function reply(
  conn: ByteConn,
  status: number,
  reason: string,
  keepAlive = false,
): Promise<undefined> {
  const text = {
    400: "Bad Request",
    403: "Forbidden",
    411: "Length Required",
    413: "Content Too Large",
    502: "Bad Gateway",
  }[
    status
  ] ?? "Error";
  const safe = /^[A-Z0-9_]{1,64}$/.test(reason) ? reason : "DENIED";
  await writeAll(
    conn,
    `HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: ${
      keepAlive ? "keep-alive" : "close"
    }\r\nX-Omotai-Deny: ${safe}\r\n\r\n`,
  ).catch(() => {});
  return undefined;
}

const encoder = new TextEncoder();

function writeAll(conn: ByteConn, text: string): Promise<void> {
  return writeAllBytes(conn, encoder.encode(text));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

async function writeAllBytes(conn: ByteConn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

function closeQuietly(conn: ByteConn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}
