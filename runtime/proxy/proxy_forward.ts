/**
 * Forwarding one request: judged whole (method, full URL, upgrade, `Sec-Fetch-*`, a write's
 * body read whole first so that what is judged, and approved by a human, is exactly what is
 * sent, once), then sent to the judged address, over TLS verified against the name the
 * browser asked for inside a tunnel, on a kept upstream connection (`upstream_pool.ts`) when
 * it is a bodiless read and one is idle. A WebSocket upgrade is piped after it is allowed.
 *
 * @module
 */
import { closeQuietly, dial, encoder, pipeBoth, reply, writeAllBytes } from "./byte_io.ts";
import type { ServeContext } from "./proxy_context.ts";
import { decide } from "./proxy_decide.ts";
import { MAX_HELD_BODY, type ProxyQuestion } from "./proxy_protocol.ts";
import { type Head, readBody, requestBodyLength } from "./request_head.ts";
import { relayResponse } from "./response_relay.ts";
import { type ByteConn, upstreamTlsReason } from "./tls_terminate.ts";
import { upstreamKey } from "./upstream_pool.ts";
import type { UpstreamWait } from "./upstream_waits.ts";

/**
 * Judges one request whole (method, full URL, upgrade) and forwards it: over TLS verified
 * against the upstream's name when `secure`, on a kept upstream connection to the judged
 * address when one is idle (a WebSocket upgrade is piped after it is allowed). Returns what
 * the browser sent after the request when its connection may carry another.
 */
export async function forward(
  client: ByteConn,
  head: Head,
  url: URL,
  secure: boolean,
  ctx: ServeContext,
): Promise<{ next: Uint8Array } | undefined> {
  const { refused } = ctx;
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
  const framing = requestBodyLength(head.headers);
  if ("refuse" in framing) {
    refused(question, framing.refuse);
    return await reply(client, framing.status, framing.refuse);
  }
  const { length } = framing;
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
    // Metered before it is read: a browser past its rate waits here, its upload unread (the
    // socket's buffers fill and the browser's writes wait); one over it too long is ended.
    const pace = ctx.heldBodies.take(length);
    if (pace.kind === "flood") {
      ctx.flooding();
      refused(question, "SESSION_FLOODING");
      return await reply(client, 429, "SESSION_FLOODING");
    }
    if (pace.kind === "wait") await new Promise((r) => setTimeout(r, pace.ms));
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
  const verdict = await decide(question, url.hostname, ctx);
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
  // A request the runtime released (`upstream_waits.ts`: judged before a navigation whose
  // main response is late) is answered for it, never sent again, as a silent upstream's is;
  // once its answer's head went to the browser, its body is cut short instead.
  const released = async (answered: boolean) => {
    refused(question, "UPSTREAM_RELEASED");
    if (!answered) await reply(client, 504, "UPSTREAM_RELEASED");
    return undefined;
  };
  for (;;) {
    // From the dial to the body's end the request waits on its upstream: a release closes
    // the connection it waits on.
    const wait = ctx.waits.begin();
    try {
      if (pooled) wait.hold(pooled);
      const upstream = pooled ?? await openUpstream(verdict.address, port, secure, name, ctx, wait);
      if (wait.released) {
        if (typeof upstream !== "string") closeQuietly(upstream);
        return await released(false);
      }
      if (typeof upstream === "string") {
        refused(question, upstream);
        return await refuse(502, upstream);
      }
      let keep = false;
      // Whether any of the answer went to the browser (a released request's 504 cannot follow).
      let answered = false;
      const toClient: ByteConn = {
        read: (p) => client.read(p),
        write: (p) => {
          answered = true;
          return client.write(p);
        },
        close: () => client.close(),
      };
      try {
        if (pooled) {
          const sent = await writeAllBytes(upstream, requestHead).then(() => true, () => false);
          if (wait.released) return await released(false);
          if (!sent) {
            pooled = undefined;
            continue;
          }
        } else await writeAllBytes(upstream, requestHead);
        if (upgrade) {
          // A WebSocket lives as long as its page wants: not a wait to release.
          wait[Symbol.dispose]();
          if (head.rest.length) await writeAllBytes(upstream, head.rest);
          await pipeBoth(client, upstream);
          return;
        }
        if (body.length) await writeAllBytes(upstream, body);
        const next = after;
        const relayed = await relayResponse(
          upstream,
          toClient,
          keepAlive,
          head.method,
          ctx.upstreamAnswerMs,
        ).catch((err) => {
          if (wait.released) return "released" as const;
          throw err;
        });
        // Checked first: a released wait's closed upstream reads as stale, which is retried.
        if (wait.released || relayed === "released") return await released(answered);
        if (relayed === "stale") {
          if (pooled) {
            pooled = undefined;
            continue;
          }
          return undefined;
        }
        if (relayed === "timeout") {
          // Answered, never sent again: a request closed without an answer is retried by the
          // browser, and each such request holds one of the few connections a browser opens
          // to a host (a page's requests that never end, kept alive past the page, held every
          // later navigation to it).
          refused(question, "UPSTREAM_TIMEOUT");
          return await reply(client, 504, "UPSTREAM_TIMEOUT");
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
    } catch (err) {
      // A write to a released upstream fails: the release, not the failure, is the answer.
      if (wait.released) return await released(false);
      throw err;
    } finally {
      wait[Symbol.dispose]();
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
  ctx: ServeContext,
  wait: UpstreamWait,
): Promise<ByteConn | string> {
  const tcp = await dial(address, port);
  if (!tcp) return "UPSTREAM_UNREACHABLE";
  // A handshake the upstream never finishes is a wait like any other.
  wait.hold(tcp);
  if (!secure) return tcp;
  try {
    const conn = await Deno.startTls(tcp, {
      hostname: name,
      caCerts: ctx.tls?.upstreamCa,
      alpnProtocols: ["http/1.1"],
    });
    await conn.handshake();
    wait.hold(conn);
    return conn;
  } catch (err) {
    closeQuietly(tcp);
    return upstreamTlsReason(err);
  }
}
