/**
 * The proxy's byte I/O: writing whole, dialling an upstream, piping two connections, a
 * connection with bytes read back in front of it, and the proxy's own short answers.
 *
 * @module
 */
import type { ByteConn } from "./tls_terminate.ts";

const CONNECT_TIMEOUT_MS = 10_000;

export const encoder = new TextEncoder();
export const latin1 = new TextDecoder("latin1");

/** `conn` with `first` read back in front of it. */
export function prefixed(conn: ByteConn, first: Uint8Array): ByteConn {
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
 * Kept-alive connections carry a head and a body as separate writes: without this, Nagle's
 * algorithm holds the second until the peer's delayed ACK (tens of ms).
 */
export function noDelay(conn: Deno.Conn): void {
  try {
    (conn as Deno.TcpConn).setNoDelay?.(true);
  } catch { /* not a TCP socket */ }
}

/** A TCP connection to the judged `address`, or undefined when it cannot be made. */
export async function dial(address: string, port: number): Promise<Deno.TcpConn | undefined> {
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

/** Copies both ways until either side closes, then closes both. */
export async function pipeBoth(a: ByteConn, b: ByteConn): Promise<void> {
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

/** The proxy's own answer: a status, no body, the reason in `X-Omotai-Deny`. */
export async function reply(
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
    504: "Gateway Timeout",
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

export function writeAll(conn: ByteConn, text: string): Promise<void> {
  return writeAllBytes(conn, encoder.encode(text));
}

export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (b.length === 0) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

export async function writeAllBytes(conn: ByteConn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

export function closeQuietly(conn: ByteConn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}
