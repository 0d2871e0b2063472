/**
 * Messages between the runtime and its egress proxy process, one JSON object per line on
 * the proxy's stdin (runtime → proxy) and stdout (proxy → runtime). The proxy holds the
 * network permission; the runtime holds the policy. A request that writes (any method but
 * GET and HEAD, or any body) is held whole by the proxy and asked about with its body: the
 * runtime judges, and a human may approve, exactly the bytes the proxy then sends.
 *
 * @module
 */
import type { ByteRateLimits } from "../../shared/mod.ts";

/** What the proxy asks about one connection or plain-HTTP request. */
export type ProxyQuestion =
  | { type: "connect"; host: string; port: number }
  /**
   * One request: plain HTTP, or read inside a tunnel (https and wss after TLS termination,
   * ws: as is), with the protocol it asks to upgrade to (`websocket`).
   */
  | {
    type: "http";
    method: string;
    url: string;
    upgrade?: string;
    /** The browser's `Sec-Fetch-Site/Mode/Dest`, when it sent them (lower case, checked). */
    secFetch?: { site?: string; mode?: string; dest?: string };
    /**
     * The request's headers as the proxy would send them (`Proxy-*` and hop-by-hop ones
     * left out): what a held write shows the operator, and where a credential is looked for.
     */
    headers?: [string, string][];
    /** A write's held body: what the proxy sends upstream if, and only if, it is allowed. */
    body?: HeldBody;
  }
  /** A request the proxy could not read; only ever reported as refused, never asked. */
  | { type: "malformed" };

/** A request body the proxy holds until its question is answered. */
export interface HeldBody {
  /** The request's `Content-Type` header as sent, or null. */
  contentType: string | null;
  /** The exact body bytes, base64. */
  base64: string;
}

/** The largest body the proxy holds for a question; a larger one is refused (`BODY_TOO_LARGE`). */
export const MAX_HELD_BODY = 8 * 1024 * 1024;

/**
 * How fast one listener's (one browser's) held bodies are taken in (`ByteRate`'s rule): every
 * held body is read whole by the proxy, sent to the runtime in base64 and decoded there, by
 * one process for every session. Past the rate the proxy waits before reading the next body
 * (the browser's upload waits); a browser over it for `floodMs` is ended (`SESSION_FLOODING`).
 * Writes are rare and small next to this: a form post is kilobytes, an upload a few MiB, and
 * each is judged (and often approved by a human) one at a time. So a browser may hold 4 MiB/s
 * for as long as it likes and 32 MiB (four bodies at the cap) at once above that; one that
 * keeps sending 8 MiB bodies faster than that for 10 s is ended.
 */
export const HELD_BODY_RATE: Readonly<ByteRateLimits> = {
  bytesPerSec: 4 * 1024 * 1024,
  burstBytes: 4 * MAX_HELD_BODY,
  floodMs: 10_000,
};

/** Where a name resolved (looked up only after the policy allowed the origin). */
export interface Resolution {
  /** Addresses the proxy connects to (the first is used). */
  addresses: string[];
  /** Any answer was private or loopback. */
  privateAddress: boolean;
  /** Resolution failed. */
  failed: boolean;
}

/** The runtime's answer to a question. */
export interface ProxyAnswer {
  allow: boolean;
  reason: string;
  /** The origin is listed exactly (policy file or operator allow): it may be private. */
  exact: boolean;
}

/** Runtime → proxy. */
export type ToProxy =
  /** Terminate TLS in tunnels (leaves come from the runtime), trusting these extra roots. */
  | { op: "configure"; terminateTls: boolean; upstreamCa?: string[] }
  /** The leaf for a host the proxy asked for (none: it could not be made). */
  | { op: "leaf"; lid: number; cert?: string; key?: string }
  /** A listener for one browser; its held bodies metered at `heldBodies` (default `HELD_BODY_RATE`). */
  | { op: "listen"; listener: number; heldBodies?: ByteRateLimits }
  | { op: "close"; listener: number }
  | ({ op: "answer"; qid: number } & ProxyAnswer)
  /**
   * Ends the listener's upstream waits that began before the proxy handled the runtime's
   * line `mark + 1` (`mark`: how many lines the runtime had sent when it took it), each
   * answered `504 UPSTREAM_RELEASED` and reported `refused` (`upstream_waits.ts`): a
   * navigation's main response is late, and requests judged before it began are released.
   */
  | { op: "release"; listener: number; mark: number };

/** Proxy → runtime. */
export type FromProxy =
  | { op: "listening"; listener: number; port: number }
  /** A leaf certificate for a host the proxy terminates TLS for. */
  | { op: "leaf"; lid: number; host: string }
  | { op: "ask"; qid: number; listener: number; question: ProxyQuestion }
  /**
   * A request the proxy refused on its own (unreadable, chunked upload) or an allowed one it
   * could not complete (lookup, private answer, upstream unreachable or silent, released):
   * audited as a deny.
   */
  | { op: "refused"; listener: number; question: ProxyQuestion; reason: string }
  /** The listener's browser kept sending held bodies over the rate: the runtime ends it. */
  | { op: "flooding"; listener: number }
  | { op: "error"; message: string };
