/**
 * What the egress proxy refused, kept a few seconds, so that the request of the page that
 * then failed can be given its reason: Chromium reports only `ERR_TUNNEL_CONNECTION_FAILED`
 * for a refused tunnel, and a refused request's 403 may never reach `Network` (a CORS
 * failure hides it). Requests are matched by method and shown URL (origin and path),
 * tunnels by host and port. The proxy cannot tell a page's CONNECT from Chromium's own
 * (sign-in, update checks); only the page's are the model's to hear of, and those are the
 * ones the page's `Network` events name. The runtime notes a refusal before the proxy
 * answers, so it is always here before the page hears of its failure.
 *
 * @module
 */

/** `host:port` of an http(s) or ws(s) URL, the port spelled out; undefined for others. */
export function authorityOf(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const port = u.port ||
    ({ "http:": "80", "ws:": "80", "https:": "443", "wss:": "443" } as Record<string, string>)[
      u.protocol
    ];
  return port && u.hostname ? `${u.hostname}:${port}` : undefined;
}

interface Refusal {
  reason: string;
  at: number;
}

interface Socket {
  url: string;
  authority: string;
  at: number;
}

/** What the correlation keeps and for how long. */
export interface ProxyRefusalLimits {
  /** Refusals of each kind and opened sockets kept (the oldest go first). */
  max: number;
  /** How long a refusal or an opened socket waits for its other half. */
  ttlMs: number;
}

/** Recent refusals of the egress proxy and the page WebSockets waiting on one. */
export class ProxyRefusals {
  readonly #tunnels = new Map<string, Refusal>();
  readonly #requests = new Map<string, Refusal>();
  readonly #sockets = new Map<string, Socket>();
  readonly #limits: ProxyRefusalLimits;
  readonly #now: () => number;

  constructor(limits: Partial<ProxyRefusalLimits> = {}, now = () => performance.now()) {
    this.#limits = { max: 64, ttlMs: 10_000, ...limits };
    this.#now = now;
  }

  /** Notes a refused request by method and shown URL (origin and path, as the log shows). */
  requestRefused(method: string, shownUrl: string, reason: string): void {
    this.#put(this.#requests, requestKey(method, shownUrl), reason);
  }

  /**
   * Notes a refused tunnel; returns the URLs of the page's WebSockets it refused (opened
   * just before, to that host and port), which are then forgotten.
   */
  tunnelRefused(authority: string, reason: string): string[] {
    this.#put(this.#tunnels, authority, reason);
    const now = this.#now();
    const matched: string[] = [];
    for (const [id, s] of this.#sockets) {
      if (s.authority !== authority || now - s.at > this.#limits.ttlMs) continue;
      matched.push(s.url);
      this.#sockets.delete(id);
    }
    return matched;
  }

  /**
   * Why the proxy refused the page's request (method, shown URL) just now, if it did; taken,
   * so it is given once.
   */
  requestReason(method: string, shownUrl: string): string | undefined {
    const key = requestKey(method, shownUrl);
    const reason = this.#fresh(this.#requests.get(key));
    if (reason !== undefined) this.#requests.delete(key);
    return reason;
  }

  /** Why the tunnel of a request that failed with `failure` was refused just now, if it was. */
  tunnelReason(shownUrl: string, failure: string): string | undefined {
    if (!/TUNNEL_CONNECTION_FAILED/.test(failure)) return undefined;
    const authority = authorityOf(shownUrl);
    return authority === undefined ? undefined : this.#fresh(this.#tunnels.get(authority));
  }

  /** Notes a WebSocket the page opened (its tunnel is asked for right after). */
  socketOpened(requestId: string, url: string): void {
    const authority = authorityOf(url);
    if (authority === undefined) return;
    this.#sockets.set(requestId, { url, authority, at: this.#now() });
    trim(this.#sockets, this.#limits.max);
  }

  #put(map: Map<string, Refusal>, key: string, reason: string): void {
    map.delete(key);
    map.set(key, { reason, at: this.#now() });
    trim(map, this.#limits.max);
  }

  #fresh(r: Refusal | undefined): string | undefined {
    return r && this.#now() - r.at <= this.#limits.ttlMs ? r.reason : undefined;
  }
}

function requestKey(method: string, shownUrl: string): string {
  return `${method.toUpperCase()} ${shownUrl}`;
}

function trim<V>(map: Map<string, V>, max: number): void {
  while (map.size > max) map.delete(map.keys().next().value!);
}
