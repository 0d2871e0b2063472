/**
 * Messages between the runtime and its egress proxy process, one JSON object per line on
 * the proxy's stdin (runtime → proxy) and stdout (proxy → runtime). The proxy holds the
 * network permission; the runtime holds the policy. Nothing here carries a request body.
 *
 * @module
 */

/** What the proxy asks about one connection or plain-HTTP request. */
export type ProxyQuestion =
  | { type: "connect"; host: string; port: number }
  | { type: "http"; method: string; url: string };

/** The proxy's view of where the name resolved. */
export interface Resolution {
  /** Addresses the proxy would connect to (the first is used). */
  addresses: string[];
  /** Any answer was private or loopback. */
  privateAddress: boolean;
  /** Resolution failed (the connection is refused whatever the policy says). */
  failed: boolean;
}

/** Runtime → proxy. */
export type ToProxy =
  | { op: "listen"; listener: number }
  | { op: "close"; listener: number }
  | { op: "answer"; qid: number; allow: boolean; reason: string };

/** Proxy → runtime. */
export type FromProxy =
  | { op: "listening"; listener: number; port: number }
  | { op: "ask"; qid: number; listener: number; question: ProxyQuestion; resolution: Resolution }
  | { op: "error"; message: string };
