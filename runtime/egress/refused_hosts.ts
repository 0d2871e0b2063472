/**
 * Tunnels the policy refused, refused in the browser from then on. A CONNECT's facts are its
 * host and port alone, so once the policy refused the tunnel to `host:port` it refuses every
 * later one there; the proxy cannot make Chromium stop asking, and each ask costs the page a
 * connection, a round trip to the runtime and a slot of Chromium's six per host. So the
 * session's page targets get that host and port in `Network.setBlockedURLs` (https, wss and
 * ws, the schemes that go through a tunnel; plain http is judged per request and never
 * learned), and Chromium fails such a request before it leaves the renderer's process.
 *
 * Such a refusal is still the model's to hear of and still audited: `onRefused` hands it to
 * the session's egress ledger when Chromium reports the request refused
 * (`blockedReason: inspector`). Only refusals the
 * policy settled are learned (never an error or a timeout), and all are forgotten when the
 * operator's domain rules change: a stale entry can only refuse, and only until then.
 *
 * @module
 */
import type { CdpSession, TrackedTarget } from "../../cdp/mod.ts";
import { authorityOf } from "../browser/mod.ts";

/** Target types whose `Network` domain the session's network log enables. */
const TAB_TYPES = new Set(["page", "iframe", "worker"]);

/** Host names a URL pattern may name: DNS names and IPv4 literals, nothing to escape. */
const PLAIN_HOST = /^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/;

/** What a request refused this way is reported as. */
export interface HostRefusal {
  method: string;
  url: string;
  reason: string;
  /** The request's CDP `Network` id, for the network log. */
  requestId: string;
}

/** One session's learned tunnel refusals. */
export class RefusedHosts {
  readonly #learned = new Map<string, string>();
  readonly #sessions = new Set<CdpSession>();
  readonly #onRefused: (refusal: HostRefusal) => void;
  readonly #max: number;
  #generation: number | undefined;

  /** `onRefused` hears of every request Chromium refused on a learned entry. */
  constructor(onRefused: (refusal: HostRefusal) => void, max = 512) {
    this.#onRefused = onRefused;
    this.#max = max;
  }

  /**
   * Follows a page, frame or worker target (after the network log enabled `Network` on it):
   * hands it the learned list and reports its requests refused on it.
   */
  install(target: TrackedTarget): Promise<void> {
    if (!TAB_TYPES.has(target.info.type)) return Promise.resolve();
    const session = target.session;
    const watched = new Map<string, { method: string; url: string }>();
    session.on("Network.requestWillBeSent", (e) => {
      if (this.#learned.size === 0) return;
      const authority = authorityOf(e.request.url);
      if (authority === undefined || !this.#learned.has(authority)) return;
      watched.set(e.requestId, { method: e.request.method.toUpperCase(), url: e.request.url });
      if (watched.size > 256) watched.delete(watched.keys().next().value!);
    });
    session.on("Network.loadingFailed", (e) => {
      const request = watched.get(e.requestId);
      if (!request) return;
      watched.delete(e.requestId);
      if (e.blockedReason !== "inspector") return;
      const reason = this.#learned.get(authorityOf(request.url) ?? "");
      if (reason) this.#onRefused({ ...request, reason, requestId: e.requestId });
    });
    session.on("Network.loadingFinished", (e) => watched.delete(e.requestId));
    this.#sessions.add(session);
    session.onDetach(() => this.#sessions.delete(session));
    // Never fatal to the target: what the browser does not refuse, the proxy still refuses.
    return this.#learned.size === 0 ? Promise.resolve() : this.#push(session).catch(() => {});
  }

  /**
   * Learns that the policy refused the tunnel to `host:port` for `reason`, under the domain
   * rules of `generation`; rules of another generation forget everything learned first.
   */
  learn(host: string, port: number, reason: string, generation: number): void {
    if (generation !== this.#generation) this.forget(generation);
    const name = host.toLowerCase();
    if (!PLAIN_HOST.test(name) || !Number.isInteger(port) || port < 1 || port > 65_535) return;
    const authority = `${name}:${port}`;
    if (this.#learned.has(authority) || this.#learned.size >= this.#max) return;
    this.#learned.set(authority, reason);
    for (const s of this.#sessions) this.#push(s).catch(() => {});
  }

  /** Forgets everything learned when the domain rules are no longer those of `generation`. */
  sync(generation: number): void {
    if (this.#generation !== undefined && generation !== this.#generation) this.forget(generation);
  }

  /** Forgets every learned refusal (the domain rules changed to `generation`). */
  forget(generation?: number): void {
    this.#generation = generation;
    if (this.#learned.size === 0) return;
    this.#learned.clear();
    for (const s of this.#sessions) this.#push(s).catch(() => {});
  }

  /** The block patterns of everything learned, in URLPattern syntax. */
  patterns(): string[] {
    const out: string[] = [];
    for (const authority of this.#learned.keys()) {
      const at = authority.lastIndexOf(":");
      const host = authority.slice(0, at);
      const port = Number(authority.slice(at + 1));
      const secure = port === 443 ? "" : `:${port}`;
      out.push(`https://${host}${secure}/*`, `wss://${host}${secure}/*`);
      out.push(`ws://${host}${port === 80 ? "" : `:${port}`}/*`);
    }
    return out;
  }

  #push(session: CdpSession): Promise<void> {
    const urlPatterns = this.patterns().map((urlPattern) => ({ urlPattern, block: true }));
    return session.send("Network.setBlockedURLs", { urlPatterns }).then(() => {});
  }
}
