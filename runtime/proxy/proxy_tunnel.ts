/**
 * CONNECT tunnels. An allowed tunnel is read instead of piped when the proxy terminates TLS:
 * TLS (https, wss) with the runtime's leaf for the host, plain HTTP (ws: over a tunnel) as
 * it is, and each request inside is judged whole and forwarded on its own. A tunnel whose
 * first bytes are neither is refused (`TUNNEL_NOT_HTTP`).
 *
 * @module
 */
import {
  closeQuietly,
  dial,
  latin1,
  pipeBoth,
  prefixed,
  reply,
  writeAll,
  writeAllBytes,
} from "./byte_io.ts";
import type { ServeContext } from "./proxy_context.ts";
import { decide } from "./proxy_decide.ts";
import { forward } from "./proxy_forward.ts";
import { type Head, readHead } from "./request_head.ts";
import { type ByteConn, terminateTls } from "./tls_terminate.ts";

/** A CONNECT request: the client that sent it, its head, and the `host:port` it names. */
export interface ConnectRequest {
  client: ByteConn;
  head: Head;
  /** Lower case, as the request names it (an IPv6 literal keeps its brackets). */
  host: string;
  port: number;
}

/**
 * A CONNECT tunnel to `host:port`: judged by host and port (and looked up) first; then, with
 * TLS termination, read inside ({@link openTunnel}), else piped to the judged address.
 */
export async function serveConnect(req: ConnectRequest, ctx: ServeContext): Promise<void> {
  const { client, head, host, port } = req;
  const question = { type: "connect" as const, host, port };
  const verdict = await decide(question, host, ctx);
  if (!verdict.address) return await reply(client, 403, verdict.reason);
  if (ctx.tls) return await openTunnel(req, ctx);
  const upstream = await dial(verdict.address, port);
  if (!upstream) {
    ctx.refused(question, "UPSTREAM_UNREACHABLE");
    return await reply(client, 502, "UPSTREAM_UNREACHABLE");
  }
  try {
    await writeAll(client, "HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.rest.length) await writeAllBytes(upstream, head.rest);
    await pipeBoth(client, upstream);
  } finally {
    closeQuietly(upstream);
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
async function openTunnel(req: ConnectRequest, ctx: ServeContext): Promise<void> {
  const { client, head, host, port } = req;
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
    const leaf = await ctx.tls!.leaf(host).catch(() => undefined);
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
      const inside = await readHead(conn);
      if (inside === "empty") return;
      if (!inside || !inside.target.startsWith("/")) {
        ctx.refused({ type: "malformed" }, "BAD_REQUEST");
        return await reply(conn, 400, "BAD_REQUEST");
      }
      let url: URL;
      try {
        url = new URL(`${scheme}://${shownHost}:${port}${inside.target}`);
      } catch {
        ctx.refused({ type: "malformed" }, "BAD_REQUEST");
        return await reply(conn, 400, "BAD_REQUEST");
      }
      const kept = await forward(conn, inside, url, secure, ctx);
      if (!kept) return;
      conn = prefixed(inner, kept.next);
    }
  } finally {
    closeQuietly(inner);
  }
}
