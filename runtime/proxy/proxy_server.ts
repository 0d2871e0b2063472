/**
 * The egress proxy's HTTP forward-proxy logic. Chromium is forced through it
 * (`--proxy-server`, loopback not bypassed, non-proxied UDP off), so every connection the
 * browser makes, including WebSocket handshakes and WebRTC's TCP fallback that `Fetch`
 * never sees, arrives here. Each CONNECT tunnel and each plain-HTTP request is resolved,
 * asked about, and only then connected, to the address that was judged (no second lookup,
 * so a DNS answer cannot change between the check and the connect).
 *
 * A plain-HTTP request is forwarded with `Connection: close` both ways and nothing after
 * its body is read from the browser: every request on a connection is judged on its own.
 *
 * @module
 */
import { isIpLiteral, isPrivateHost } from "../net/addresses.ts";
import type { ProxyAnswer, ProxyQuestion, Resolution } from "./proxy_protocol.ts";

/** Asks the runtime about a question. */
export type AskFn = (question: ProxyQuestion) => Promise<ProxyAnswer>;

/** Told when an allowed connection is refused after the lookup. */
export type RefusedFn = (question: ProxyQuestion, reason: string) => void;

/** Resolves a host name; replaceable in tests. */
export type ResolveFn = (host: string) => Promise<string[]>;

const MAX_HEAD = 64 * 1024;
const HEAD_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;

/** Accepts connections on `listener` until it closes. */
export async function serveProxy(
  listener: Deno.Listener,
  ask: AskFn,
  refused: RefusedFn = () => {},
  resolve: ResolveFn = defaultResolve,
): Promise<void> {
  for await (const conn of listener) {
    handle(conn, ask, refused, resolve).catch(() => {}).finally(() => closeQuietly(conn));
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

async function handle(
  client: Deno.Conn,
  ask: AskFn,
  refused: RefusedFn,
  resolve: ResolveFn,
): Promise<void> {
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
  let url: URL;
  try {
    url = new URL(head.target);
  } catch {
    return await malformed();
  }
  const question = { type: "http" as const, method: head.method, url: url.href };
  if (url.protocol !== "http:" && url.protocol !== "ws:") {
    refused(question, "BAD_REQUEST");
    return await reply(client, 400, "BAD_REQUEST");
  }
  const header = (name: string) =>
    head.headers.find(([k]) => k.toLowerCase() === name)?.[1]?.trim();
  // Streaming uploads would let bytes after the judged request reach the upstream.
  if (header("transfer-encoding")) {
    refused(question, "CHUNKED_REFUSED");
    return await reply(client, 411, "CHUNKED_REFUSED");
  }
  const length = Number(header("content-length") ?? "0");
  if (!Number.isSafeInteger(length) || length < 0) {
    refused(question, "BAD_REQUEST");
    return await reply(client, 400, "BAD_REQUEST");
  }
  const upgrade = (header("upgrade") ?? "") !== "";
  const verdict = await decide(question, url.hostname, ask, refused, resolve);
  if (!verdict.address) return await reply(client, 403, verdict.reason);
  const port = Number(url.port || 80);
  const upstream = await dial(verdict.address, port);
  if (!upstream) {
    refused(question, "UPSTREAM_UNREACHABLE");
    return await reply(client, 502, "UPSTREAM_UNREACHABLE");
  }
  try {
    const lines = [`${head.method} ${url.pathname}${url.search} ${head.version}`];
    for (const [k, v] of head.headers) {
      const key = k.toLowerCase();
      if (key.startsWith("proxy-") || key === "keep-alive") continue;
      if (key === "connection" && !upgrade) continue;
      lines.push(`${k}: ${v}`);
    }
    if (!upgrade) lines.push("Connection: close");
    await writeAll(upstream, lines.join("\r\n") + "\r\n\r\n");
    if (upgrade) {
      if (head.rest.length) await writeAllBytes(upstream, head.rest);
      await pipeBoth(client, upstream);
      return;
    }
    await forwardBody(client, upstream, head.rest, length);
    await forwardResponse(upstream, client);
  } finally {
    closeQuietly(upstream);
  }
}

async function forwardBody(
  client: Deno.Conn,
  upstream: Deno.Conn,
  already: Uint8Array,
  length: number,
): Promise<void> {
  let left = length;
  const first = already.subarray(0, Math.min(already.length, left));
  if (first.length) await writeAllBytes(upstream, first);
  left -= first.length;
  const buf = new Uint8Array(Math.min(64 * 1024, left));
  while (left > 0) {
    const n = await client.read(buf.subarray(0, Math.min(buf.length, left)));
    if (n === null) return;
    await writeAllBytes(upstream, buf.subarray(0, n));
    left -= n;
  }
}

/** Copies the response, forcing `Connection: close` so the browser never reuses the socket. */
async function forwardResponse(upstream: Deno.Conn, client: Deno.Conn): Promise<void> {
  const head = await readHead(upstream);
  if (!head || head === "empty") return;
  const lines = [`${head.method} ${head.target}${head.version ? ` ${head.version}` : ""}`];
  for (const [k, v] of head.headers) {
    const key = k.toLowerCase();
    if (key === "connection" || key === "keep-alive" || key.startsWith("proxy-")) continue;
    lines.push(`${k}: ${v}`);
  }
  lines.push("Connection: close");
  await writeAll(client, lines.join("\r\n") + "\r\n\r\n");
  if (head.rest.length) await writeAllBytes(client, head.rest);
  const buf = new Uint8Array(16 * 1024);
  for (;;) {
    const n = await upstream.read(buf);
    if (n === null) return;
    await writeAllBytes(client, buf.subarray(0, n));
  }
}

/**
 * Reads up to the blank line; for a response, `method` is the version and `target` the
 * status. `"empty"` when the peer closed (or timed out) before sending a byte, `undefined`
 * when what it sent is not a head.
 */
async function readHead(conn: Deno.Conn): Promise<Head | "empty" | undefined> {
  // Most heads fit in a few KiB: start small (one per request adds up), grow to the cap.
  let buf = new Uint8Array(4096);
  let len = 0;
  const timer = setTimeout(() => closeQuietly(conn), HEAD_TIMEOUT_MS);
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
    clearTimeout(timer);
  }
}

const latin1 = new TextDecoder("latin1");

function indexOfBlankLine(buf: Uint8Array, len: number): number {
  for (let i = 0; i + 3 < len; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}

async function dial(address: string, port: number): Promise<Deno.TcpConn | undefined> {
  try {
    return await Deno.connect({
      hostname: address,
      port,
      signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS),
    } as Deno.ConnectOptions);
  } catch {
    return undefined;
  }
}

async function pipeBoth(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  const copy = async (from: Deno.Conn, to: Deno.Conn) => {
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

async function reply(conn: Deno.Conn, status: number, reason: string): Promise<void> {
  const text = { 400: "Bad Request", 403: "Forbidden", 411: "Length Required", 502: "Bad Gateway" }[
    status
  ] ?? "Error";
  const safe = /^[A-Z0-9_]{1,64}$/.test(reason) ? reason : "DENIED";
  await writeAll(
    conn,
    `HTTP/1.1 ${status} ${text}\r\nContent-Length: 0\r\nConnection: close\r\nX-Omotai-Deny: ${safe}\r\n\r\n`,
  ).catch(() => {});
}

function writeAll(conn: Deno.Conn, text: string): Promise<void> {
  return writeAllBytes(conn, new TextEncoder().encode(text));
}

async function writeAllBytes(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}
