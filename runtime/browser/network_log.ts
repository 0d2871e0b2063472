/**
 * The requests of a session's tabs since each tab's page loaded: method, origin and path,
 * status or failure, and for a request the egress guard refused, its reason code. Kept per
 * tab in a bounded ring and shown by `browser_network_requests`. `Network` is enabled with
 * no body buffers and headers are never kept: a URL is reduced to origin and path the
 * moment it arrives, so no query, fragment, header, body or cookie is ever stored. What is
 * kept of the page's strings (origin and path, method, status text, failure) is redacted
 * before it is cut, and stored redacted.
 *
 * @module
 */
import type { Protocol, TrackedTarget } from "../../cdp/mod.ts";
import { displayUrl } from "../net/mod.ts";
import { processRedactor, redactCut, type Redactor } from "../redact/mod.ts";
import { LINE_BREAKS, untrustedBlock } from "../snapshot/mod.ts";
import type { RefusedRequest } from "./refused_notice.ts";
import type { TargetWatcher } from "./hooks.ts";
import { TabLogs } from "./tab_logs.ts";
import { tabTargetOf } from "./tab_of.ts";
import { ProxyRefusals } from "./proxy_refusals.ts";

/** The bounds of the log; each caps memory or output a page could otherwise grow. */
export interface NetworkLimits {
  /** Requests kept per tab (the oldest go first). */
  perTab: number;
  /** Tabs with a log; the least recently written one goes first. */
  tabs: number;
  /** Requests one answer lists (the newest). */
  listed: number;
  /** Characters of a shown URL (origin and path). */
  url: number;
  /** Refusal reasons waiting for their request's `Network` event. */
  pending: number;
}

/** The defaults: 500 requests kept per tab, 300 listed. */
export const NETWORK_LIMITS: Readonly<NetworkLimits> = {
  perTab: 500,
  tabs: 16,
  listed: 300,
  url: 200,
  pending: 256,
};

/**
 * `Network.enable` without buffers: bodies are never needed, and Chromium would otherwise
 * keep up to 100 MB of them per target for a client that asks.
 */
const NETWORK_ENABLE: Protocol.Network.EnableRequest = {
  maxTotalBufferSize: 0,
  maxResourceBufferSize: 0,
  maxPostDataSize: 0,
};

/** Resource types that are not static (Playwright lists them even when they succeed). */
const FETCHES = new Set(["XHR", "Fetch"]);

/** One request as kept: nothing the page could hide a secret in beyond origin and path. */
export interface NetworkEntry {
  /** CDP `Network` request id (the egress guard's `networkId`). */
  requestId: string;
  /** The document it belongs to (`Network` loader id). */
  loaderId: string;
  method: string;
  /** Origin and path, never a query or fragment (`scheme:` for non-HTTP URLs). */
  url: string;
  /** CDP resource type (`Document`, `Fetch`, `Image`, …). */
  type: string;
  status?: number;
  /** The server's reason phrase (page-controlled, cut short). */
  statusText?: string;
  /** Chromium's error text for a request that failed (`net::ERR_…`). */
  failure?: string;
  /** The egress guard's reason code for a request it refused. */
  refused?: string;
}

/** What a call asks for. */
export interface NetworkQuery {
  /** List successful static resources too (images, scripts, styles, documents). */
  static?: boolean;
  /** Keeps only requests whose shown URL (origin and path) passes. */
  match?: (url: string) => boolean;
}

interface TabLog {
  entries: NetworkEntry[];
  dropped: number;
}

/** Collects requests per tab; a `TargetWatcher` of the session, told of refusals by egress. */
export class NetworkLog implements TargetWatcher {
  readonly #limits: NetworkLimits;
  readonly #tabs: TabLogs<TabLog>;
  /** The latest entry of each request id still in a ring, for responses and refusals. */
  #byId = new Map<string, NetworkEntry>();
  /** Reasons of refused requests whose `requestWillBeSent` has not arrived yet. */
  #pending = new Map<string, string>();
  readonly #refusals = new ProxyRefusals();
  readonly #onRefused: (r: RefusedRequest) => void;
  readonly #redactor: Redactor;

  /**
   * `onRefused` hears of the page's requests and WebSockets whose tunnel the egress proxy
   * refused (the next snapshot's notice); the guard and the proxy report the rest themselves.
   * `redactor` (the process's by default) redacts every kept string before it is cut.
   */
  constructor(
    limits: Partial<NetworkLimits> = {},
    onRefused: (r: RefusedRequest) => void = () => {},
    redactor: Redactor = processRedactor(),
  ) {
    this.#limits = { ...NETWORK_LIMITS, ...limits };
    this.#tabs = new TabLogs<TabLog>({
      max: this.#limits.tabs,
      create: () => ({ entries: [], dropped: 0 }),
      onForget: (log) => log.entries.forEach((e) => this.#unindex(e)),
    });
    this.#onRefused = onRefused;
    this.#redactor = redactor;
  }

  /**
   * Enables `Network` on pages, frames and dedicated workers of a tab. Sent before the
   * tracker resumes the target, never awaited: a target whose requests cannot be listed
   * still runs (listing is not guarding; the egress guard is).
   */
  watch(target: TrackedTarget): void {
    const tabId = tabTargetOf(target);
    if (tabId === undefined) return;
    const { session, info: { type } } = target;
    session.on("Network.requestWillBeSent", (e) => this.#sent(tabId, e));
    session.on("Network.responseReceived", (e) => {
      const entry = this.#byId.get(e.requestId);
      if (!entry) return;
      entry.status = e.response.status;
      entry.statusText = this.#cut(e.response.statusText ?? "", 60, oneLine);
      const reason = entry.refused ?? this.#refusals.requestReason(entry.method, entry.url);
      if (reason !== undefined) entry.refused = reason;
    });
    session.on("Network.loadingFailed", (e) => {
      const entry = this.#byId.get(e.requestId);
      if (!entry) return;
      entry.failure = this.#cut(e.errorText, 80, oneLine);
      if (entry.refused) return;
      const request = this.#refusals.requestReason(entry.method, entry.url);
      if (request !== undefined) {
        entry.refused = request;
        return;
      }
      const tunnel = this.#refusals.tunnelReason(entry.url, e.errorText);
      if (tunnel === undefined) return;
      entry.refused = tunnel;
      // The proxy told the session of refused requests itself, but not of tunnels.
      this.#onRefused({ method: entry.method, origin: originOf(entry.url), reason: tunnel });
    });
    session.on("Network.webSocketCreated", (e) => this.#refusals.socketOpened(e.requestId, e.url));
    if (type === "page") {
      session.on("Page.frameNavigated", ({ frame }) => {
        if (frame.parentId === undefined) this.#navigated(tabId, frame.loaderId);
      });
      session.onDetach(() => this.#tabs.forget(tabId));
    }
    session.send("Network.enable", NETWORK_ENABLE).catch(() => {});
  }

  /**
   * A tunnel (`host:port`) the egress proxy refused: the page's WebSockets opened to it just
   * before are reported refused now, its failed requests when Chromium reports them.
   */
  tunnelRefused(authority: string, reason: string): void {
    for (const url of this.#refusals.tunnelRefused(authority, reason)) {
      this.#onRefused({ method: "GET", origin: originOf(url), reason });
    }
  }

  /**
   * A request the egress proxy refused (full URL, reduced to origin and path at once): its
   * entry gets the reason when Chromium reports the request failed or answered.
   */
  requestRefused(method: string, url: string, reason: string): void {
    // Shown as the log shows it, redaction included, so the two still meet.
    this.#refusals.requestRefused(this.#method(method), this.#shownUrl(url), reason);
  }

  /** Attaches the egress guard's reason to the request it refused (by `networkId`). */
  refused(r: RefusedRequest): void {
    if (!r.networkId) return;
    const entry = this.#byId.get(r.networkId);
    if (entry) {
      entry.refused = r.reason;
      return;
    }
    // The guard may judge a request before its `Network` event reaches us.
    if (this.#pending.size >= this.#limits.pending) {
      this.#pending.delete(this.#pending.keys().next().value!);
    }
    this.#pending.set(r.networkId, r.reason);
  }

  /** The requests of tab `tabId` since its page loaded, oldest first (copies). */
  list(tabId: string): { entries: NetworkEntry[]; dropped: number } {
    const log = this.#tabs.get(tabId);
    return { entries: (log?.entries ?? []).map((e) => ({ ...e })), dropped: log?.dropped ?? 0 };
  }

  /**
   * The answer of `browser_network_requests` for tab `tabId`: counts, then one numbered
   * line per request inside an untrusted block (URLs are page-controlled).
   */
  render(tabId: string, query: NetworkQuery, nonce: string): string {
    const { entries, dropped } = this.list(tabId);
    const lines: string[] = [];
    let hiddenStatic = 0;
    entries.forEach((e, i) => {
      if (!query.static && isStaticSuccess(e)) {
        hiddenStatic++;
        return;
      }
      if (query.match && !query.match(e.url)) return;
      lines.push(`${i + 1}. ${requestLine(e)}`);
    });
    const refused = entries.filter((e) => e.refused).length;
    const failed = entries.filter((e) => !e.refused && e.failure).length;
    // "blocked" and `[BLOCKED]` are the words the model reads for a refusal (docs/glossary.md).
    const head = [
      `${entries.length} request${entries.length === 1 ? "" : "s"} since the page loaded` +
      ` (${refused} blocked, ${failed} failed)`,
    ];
    if (dropped > 0) {
      head.push(
        `${dropped} earlier requests were dropped (the log keeps the last ${this.#limits.perTab})`,
      );
    }
    const shown = lines.slice(-this.#limits.listed);
    if (lines.length > shown.length) {
      head.push(`${lines.length - shown.length} more requests not listed (the oldest)`);
    }
    const tail = hiddenStatic > 0
      ? [
        `Note: ${hiddenStatic} static request${hiddenStatic === 1 ? "" : "s"} not shown, ` +
        `run with "static": true to see ${hiddenStatic === 1 ? "it" : "them"}.`,
      ]
      : [];
    const body = shown.length > 0 ? [untrustedBlock("network", nonce, shown, this.#redactor)] : [];
    return [...head, ...body, ...tail].join("\n");
  }

  #sent(tabId: string, e: Protocol.Network.RequestWillBeSentEvent): void {
    const previous = this.#byId.get(e.requestId);
    // A redirect reuses the request id: the hop before it ends with the redirect status.
    if (previous && e.redirectResponse) {
      previous.status = e.redirectResponse.status;
      previous.statusText = this.#cut(e.redirectResponse.statusText ?? "", 60, oneLine);
    }
    const entry: NetworkEntry = {
      requestId: e.requestId,
      loaderId: e.loaderId,
      method: this.#method(e.request.method),
      url: this.#shownUrl(e.request.url),
      type: e.type ?? "Other",
    };
    const reason = this.#pending.get(e.requestId);
    if (reason !== undefined) {
      this.#pending.delete(e.requestId);
      entry.refused = reason;
    }
    const log = this.#tabs.write(tabId);
    log.entries.push(entry);
    this.#byId.set(e.requestId, entry);
    if (log.entries.length > this.#limits.perTab) {
      this.#unindex(log.entries.shift()!);
      log.dropped++;
    }
  }

  /** A page string as kept: redacted, then rewritten (`oneLine`), then cut to `max`. */
  #cut(text: string, max: number, rewrite?: (t: string) => string): string {
    return redactCut(text, max, { redactor: this.#redactor, rewrite });
  }

  /** A request's URL as kept and shown: origin and path, redacted, then cut. */
  #shownUrl(url: string): string {
    return this.#cut(displayUrl(url, undefined), this.#limits.url);
  }

  /** A method as kept (a page may send any token as one). */
  #method(method: string): string {
    return this.#cut(method.toUpperCase(), 16);
  }

  /** A new document in the tab's main frame: only its own requests stay. */
  #navigated(tabId: string, loaderId: string): void {
    const log = this.#tabs.get(tabId);
    if (!log) return;
    const kept: NetworkEntry[] = [];
    for (const e of log.entries) {
      if (e.loaderId === loaderId) kept.push(e);
      else this.#unindex(e);
    }
    log.entries = kept;
    log.dropped = 0;
  }

  #unindex(e: NetworkEntry): void {
    if (this.#byId.get(e.requestId) === e) this.#byId.delete(e.requestId);
  }
}

/** Playwright's rule: a successful request that is not a fetch is a static resource. */
function isStaticSuccess(e: NetworkEntry): boolean {
  return !FETCHES.has(e.type) && !e.failure && !e.refused && e.status !== undefined &&
    e.status < 400;
}

/** `[GET] origin/path => [200] OK`, `=> [BLOCKED] REASON` or `=> [FAILED] net::…`. */
function requestLine(e: NetworkEntry): string {
  const line = `[${e.method}] ${e.url}`;
  if (e.refused) return `${line} => [BLOCKED] ${e.refused}`;
  if (e.status !== undefined) {
    return `${line} => [${e.status}]${e.statusText ? ` ${e.statusText}` : ""}`;
  }
  if (e.failure) return `${line} => [FAILED] ${e.failure}`;
  return line;
}

function oneLine(text: string): string {
  // Status texts and error texts are one line of the answer each: no line break
  // (`LINE_BREAKS`), no control character.
  // deno-lint-ignore no-control-regex
  return text.replace(LINE_BREAKS, " ").replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
}

/** The origin of a shown URL (origin and path), for a refused notice. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "unknown:";
  }
}
