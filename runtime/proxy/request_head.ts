/**
 * Reading what a peer sends before a body: a request's or a response's head (up to the
 * blank line, at most 64 KiB, under a deadline), a request's body of a known length, and the
 * framing checks that refuse a request the proxy and an upstream could read differently.
 *
 * @module
 */
import { Deadlines } from "./deadlines.ts";
import { closeQuietly, latin1 } from "./byte_io.ts";
import type { ByteConn } from "./tls_terminate.ts";

const MAX_HEAD = 64 * 1024;
/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Every head read of every listener waits on these. */
const deadlines = new Deadlines();
const HEAD_TIMEOUT_MS = 30_000;
/**
 * How long an upstream may take to start its answer before the request is answered 504 for
 * it (the production bound; `ServeOptions.upstreamAnswerMs` shortens it for tests of the
 * mechanism).
 */
export const UPSTREAM_ANSWER_MS = HEAD_TIMEOUT_MS;

/** A head as read: for a response, `method` is the version and `target` the status. */
export interface Head {
  method: string;
  target: string;
  version: string;
  headers: [string, string][];
  /** What came after the blank line with the head. */
  rest: Uint8Array;
}

/**
 * Reads up to the blank line; for a response, `method` is the version and `target` the
 * status. `"empty"` when the peer closed (or timed out) before sending a byte, `undefined`
 * when what it sent is not a head.
 */
export async function readHead(conn: ByteConn): Promise<Head | "empty" | undefined> {
  const head = await readHeadTimed(conn);
  return head === "timeout" ? "empty" : head;
}

/**
 * {@link readHead} of an upstream's response, which tells a peer that sent nothing before
 * the deadline (`"timeout"`: the request is answered for it, never sent again) from one that
 * closed (`"empty"`: a kept connection the server had given up).
 */
export function readResponseHead(
  conn: ByteConn,
  timeoutMs: number = UPSTREAM_ANSWER_MS,
): Promise<Head | "empty" | "timeout" | undefined> {
  return readHeadTimed(conn, timeoutMs);
}

async function readHeadTimed(
  conn: ByteConn,
  timeoutMs = HEAD_TIMEOUT_MS,
): Promise<Head | "empty" | "timeout" | undefined> {
  // Most heads fit in a few KiB: start small (one per request adds up), grow to the cap.
  let buf = new Uint8Array(4096);
  let len = 0;
  let late = false;
  const wait = deadlines.arm(timeoutMs, () => {
    late = true;
    closeQuietly(conn);
  });
  const nothing = () => len === 0 ? (late ? "timeout" : "empty") : undefined;
  try {
    for (;;) {
      if (len >= buf.length) {
        if (buf.length >= MAX_HEAD) return undefined;
        const grown = new Uint8Array(Math.min(buf.length * 4, MAX_HEAD));
        grown.set(buf);
        buf = grown;
      }
      const n = await conn.read(buf.subarray(len));
      if (n === null) return nothing();
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
    return nothing();
  } finally {
    deadlines.cancel(wait);
  }
}

function indexOfBlankLine(buf: Uint8Array, len: number): number {
  for (let i = 0; i + 3 < len; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}

/**
 * The length of a request's body, or why the request is refused: a streaming upload
 * (`CHUNKED_REFUSED`: bytes after the judged request would reach the upstream; an empty
 * Transfer-Encoding is one too, to a lenient upstream), or what the proxy and an upstream
 * could read differently (`BAD_REQUEST`: a header name that is not a token
 * (`Content-Length :`), a second Content-Length, a length that is not digits).
 */
export function requestBodyLength(
  headers: readonly [string, string][],
): { length: number } | { refuse: "CHUNKED_REFUSED" | "BAD_REQUEST"; status: 411 | 400 } {
  if (headers.some(([k]) => k.toLowerCase() === "transfer-encoding")) {
    return { refuse: "CHUNKED_REFUSED", status: 411 };
  }
  const lengths = headers.filter(([k]) => k.toLowerCase() === "content-length");
  const lengthHeader = lengths[0]?.[1]?.trim();
  const length = Number(lengthHeader ?? "0");
  if (
    headers.some(([k]) => !TOKEN.test(k)) || lengths.length > 1 ||
    !Number.isSafeInteger(length) || length < 0 ||
    (lengthHeader !== undefined && !/^\d+$/.test(lengthHeader))
  ) {
    return { refuse: "BAD_REQUEST", status: 400 };
  }
  return { length };
}

/**
 * Reads exactly `length` bytes of body (after `already`, read with the head); returns it and
 * what the browser sent after it (the start of its next request on a kept-alive connection,
 * judged on its own). Undefined when the browser closed or stalled before the body's end.
 */
export async function readBody(
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
