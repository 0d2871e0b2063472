/**
 * The egress proxy's test harness: an upstream that records what reached it, the proxy
 * listening on a free port with every question and refusal recorded, and one exchange of
 * raw bytes with it. The proxy tests (plain, TLS-terminating, red-team) share it, so each
 * asserts on what crossed the wire rather than on a setup of its own.
 *
 * @module
 */
import type { ProxyQuestion } from "../../runtime/proxy/proxy_protocol.ts";
import { serveProxy } from "../../runtime/proxy/proxy_server.ts";

/** What `serveProxy` serves with (how it asks, resolves, terminates TLS). */
export type ServeOptions = Parameters<typeof serveProxy>[1];

/** An upstream on 127.0.0.1 and the requests that reached it. */
export interface RecordingUpstream extends AsyncDisposable {
  port: number;
  /** `METHOD /path body` of each request, in order. */
  seen: string[];
}

/**
 * An HTTP server on a free port of 127.0.0.1 (HTTPS with `tls`) that records each request
 * and answers `reply()`.
 */
export function recordingUpstream(
  reply: () => Response,
  tls?: { cert: string; key: string },
): RecordingUpstream {
  const seen: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, ...tls, onListen: () => {} },
    async (req) => {
      seen.push(`${req.method} ${new URL(req.url).pathname} ${await req.text()}`);
      return reply();
    },
  );
  return {
    port: server.addr.port,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** The proxy on a free port, and what it asked and refused. */
export interface RecordingProxy extends AsyncDisposable {
  port: number;
  /** Every question the proxy asked, in order. */
  asked: ProxyQuestion[];
  /** The reason of every refusal the proxy reported on its own, in order. */
  refused: string[];
}

/** Serves the proxy on a free port of 127.0.0.1 with `options`, recording through them. */
export function recordingProxy(options: ServeOptions): RecordingProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const asked: ProxyQuestion[] = [];
  const refused: string[] = [];
  const served = serveProxy(listener, {
    ...options,
    ask: (q) => {
      asked.push(q);
      return options.ask(q);
    },
    refused: (q, reason) => {
      refused.push(reason);
      options.refused?.(q, reason);
    },
  });
  return {
    port: (listener.addr as Deno.NetAddr).port,
    asked,
    refused,
    async [Symbol.asyncDispose]() {
      listener.close();
      await served.catch(() => {});
    },
  };
}

/** Writes `request` to 127.0.0.1:`port` and reads until the peer closes; all it read. */
export async function exchange(port: number, request: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(request));
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(8192);
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
  }
  try {
    conn.close();
  } catch { /* closed by the proxy */ }
  return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
}
