/**
 * The egress proxy's accept loop. Chromium is forced through it (`--proxy-server`, loopback
 * not bypassed, non-proxied UDP off; in its own network namespace the listener, then a Unix
 * socket, is all it can reach), so every connection the browser makes, including WebSocket
 * handshakes and WebRTC's TCP fallback that `Fetch` never sees, arrives here. Each
 * CONNECT tunnel (`proxy_tunnel.ts`) and each plain-HTTP request (`proxy_forward.ts`) is
 * asked about, resolved, and only then connected, to the address that was judged
 * (`proxy_decide.ts`).
 *
 * Nothing after a request's body is read from the browser before that request is answered:
 * every request on a kept-alive connection is judged on its own. Upstream connections are
 * kept per listener (`upstream_pool.ts`) and only ever carry requests that were judged.
 *
 * @module
 */
import { ByteRate } from "../../shared/mod.ts";
import { closeQuietly, noDelay, prefixed, reply } from "./byte_io.ts";
import type { ServeContext, ServeOptions } from "./proxy_context.ts";
import { defaultResolve } from "./proxy_decide.ts";
import { forward } from "./proxy_forward.ts";
import { serveConnect } from "./proxy_tunnel.ts";
import { HELD_BODY_RATE } from "./proxy_protocol.ts";
import { readHead, UPSTREAM_ANSWER_MS } from "./request_head.ts";
import type { ByteConn } from "./tls_terminate.ts";
import { UpstreamPool } from "./upstream_pool.ts";
import { UpstreamWaits } from "./upstream_waits.ts";

/** Accepts connections on `listener` until it closes. */
export async function serveProxy(listener: Deno.Listener, options: ServeOptions): Promise<void> {
  using pool = new UpstreamPool();
  const ctx: ServeContext = {
    ask: options.ask,
    refused: options.refused ?? (() => {}),
    resolve: options.resolve ?? defaultResolve,
    tls: options.tls,
    pool,
    heldBodies: new ByteRate(options.heldBodies ?? HELD_BODY_RATE),
    flooding: options.flooding ?? (() => {}),
    upstreamAnswerMs: options.upstreamAnswerMs ?? UPSTREAM_ANSWER_MS,
    waits: options.waits ?? new UpstreamWaits(),
  };
  for await (const conn of listener) {
    noDelay(conn);
    serveConnection(conn, ctx).catch(() => {}).finally(() => closeQuietly(conn));
  }
}

/** One browser connection: a CONNECT tunnel, or plain-HTTP requests one after another. */
async function serveConnection(client: ByteConn, ctx: ServeContext): Promise<void> {
  // Every refusal is reported (the runtime audits it), except a connection that closed
  // before sending a byte: Chromium opens and drops spare sockets, and those carry nothing.
  const malformed = async () => {
    ctx.refused({ type: "malformed" }, "BAD_REQUEST");
    await reply(client, 400, "BAD_REQUEST");
  };
  const head = await readHead(client);
  if (head === "empty") return;
  if (!head) return await malformed();
  if (head.method === "CONNECT") {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(head.target);
    if (!m) return await malformed();
    return await serveConnect(
      { client, head, host: m[1].toLowerCase(), port: Number(m[2]) },
      ctx,
    );
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
      ctx.refused({ type: "http", method: request.method, url: url.href }, "BAD_REQUEST");
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
