/**
 * Relaying an upstream's response to the browser: interim (1xx) heads, then the final head
 * with the proxy's own connection headers (a site's `X-Omotai-Deny` stripped), then a body
 * delimited by its framing, and whether either connection may carry another request.
 *
 * @module
 */
import { concat, encoder, prefixed, writeAllBytes } from "./byte_io.ts";
import { type BodyFraming, ChunkedScanner, responseFraming } from "./http_framing.ts";
import { readResponseHead, UPSTREAM_ANSWER_MS } from "./request_head.ts";
import type { ByteConn } from "./tls_terminate.ts";

/**
 * Relays the response to `method`, interim (1xx) heads included, and finds where its body
 * ends. The browser's connection may carry its next request when it asked to keep it and
 * the end was found; the upstream's may return to the pool when, in addition, the upstream
 * did not ask to close and sent nothing past the end. `"stale"` when the upstream closed
 * before a byte of response (a kept connection the server had given up), `"timeout"` when it
 * sent none within the head deadline (an upstream that never answers), `"invalid"` when the
 * response cannot be delimited safely (nothing of it was relayed). `answerMs` bounds the
 * wait for each head.
 */
export async function relayResponse(
  upstream: ByteConn,
  client: ByteConn,
  keepAlive: boolean,
  method: string,
  answerMs: number = UPSTREAM_ANSWER_MS,
): Promise<{ client: boolean; upstream: boolean } | "stale" | "timeout" | "invalid"> {
  let from = upstream;
  let interim = false;
  for (;;) {
    const head = await readResponseHead(from, answerMs);
    if (head === "empty" && !interim) return "stale";
    if (head === "timeout" && !interim) return "timeout";
    if (!head || head === "empty" || head === "timeout") return { client: false, upstream: false };
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
