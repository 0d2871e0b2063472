/**
 * The request guard: on every browser target (page, popup, iframe including out-of-process
 * ones, dedicated/shared/service worker) it enables `Fetch` interception before the target
 * runs, turns every paused request into policy facts and lets it go only on an allow. A
 * denied request fails with a network error; nothing else reaches the page. Non-HTTP
 * traffic (WebSocket, WebRTC) and anything Chromium sends outside a target is caught by the
 * egress proxy instead, which judges every request again, whatever this guard pauses.
 *
 * @module
 */
import type { CdpSession, Protocol, TrackedTarget } from "../../cdp/mod.ts";
import type { RefusedRequest } from "../browser/mod.ts";
import type { Boundary } from "../gate/mod.ts";
import { baseFacts, type Facts, type SessionCounters, targetOf } from "../policy/mod.ts";
import { normalizeOrigin } from "../net/mod.ts";

/** What the guard needs from its session. */
export interface RequestGuardOptions {
  boundary: Boundary;
  session: () => { id: string; agent: string | null };
  counters: () => SessionCounters;
  onRefused: (request: RefusedRequest) => void;
  /** Told of every request it lets go (method, full URL), before it goes. */
  onAllowed?: (method: string, url: string) => void;
  /**
   * What `Fetch` pauses: `all` (every request, with the page facts of its frame and
   * initiator), `documents` (navigations, frames and form submits; the egress proxy alone
   * judges the rest), or nothing with `proxy`: the egress proxy, which sees inside TLS,
   * judges every request whole by method, full URL and `Sec-Fetch-*`. `bench/egress_bench.ts`
   * measures each against Chromium's floor.
   */
  pause?: GuardPause;
}

/** What the request guard pauses with `Fetch` (`proxy`: nothing). */
export type GuardPause = "all" | "documents" | "proxy";

/**
 * Target types whose requests the guard intercepts. Dedicated workers have no `Fetch`
 * domain: their requests are paused on the page or frame that owns them.
 */
const GUARDED = new Set(["page", "iframe", "shared_worker", "service_worker"]);

const SCRIPTED = new Set([
  "XHR",
  "Fetch",
  "EventSource",
  "WebSocket",
  "Ping",
  "CSPViolationReport",
]);

/** Installs request interception on targets. */
export class RequestGuard {
  #options: RequestGuardOptions;

  constructor(options: RequestGuardOptions) {
    this.#options = options;
  }

  /**
   * Sends `Fetch.enable` on a paused target (the tracker resumes it afterwards). Targets of
   * other types get nothing to intercept and stay behind the egress proxy alone.
   */
  install(target: TrackedTarget): Promise<void> {
    // Enabling `Fetch` with any pattern costs every request of the target Chromium's
    // interception price, so `proxy` enables none.
    if (!GUARDED.has(target.info.type) || this.#options.pause === "proxy") {
      return Promise.resolve();
    }
    const session = target.session;
    const frames = new Map<string, string | null>();
    const isPage = target.info.type === "page";
    const targetOrigin = () => normalizeOrigin(target.info.url) ?? null;
    if (isPage || target.info.type === "iframe") {
      session.on("Page.frameNavigated", (e) => {
        frames.set(e.frame.id, normalizeOrigin(e.frame.url) ?? null);
      });
    }
    session.on("Fetch.requestPaused", (e) => {
      const frameTop = isPage && (e.frameId === target.info.targetId || e.frameId === undefined);
      const frameOrigin = frames.get(e.frameId) ?? targetOrigin();
      this.#decide(session, e, { top: frameTop, origin: frameOrigin });
    });
    // Sent before the tracker's resume: no request of this target leaves unjudged.
    return session.send("Fetch.enable", {
      patterns: [
        this.#options.pause === "documents"
          ? { urlPattern: "*", resourceType: "Document", requestStage: "Request" }
          : { urlPattern: "*", requestStage: "Request" },
      ],
    })
      .then(() => {});
  }

  async #decide(
    session: CdpSession,
    e: Protocol.Fetch.RequestPausedEvent,
    frame: Facts["frame"],
  ): Promise<void> {
    let allow = false;
    let reason = "GATE_ERROR";
    const facts = requestFacts(e, frame, this.#options.counters());
    try {
      const who = this.#options.session();
      const j = await this.#options.boundary.judgeRequest(facts, {
        session: who.id,
        agent: who.agent,
        source: "request",
      });
      allow = j.decision === "allow";
      reason = j.reason;
    } catch {
      allow = false;
    }
    if (allow) {
      this.#options.onAllowed?.(facts.method, e.request.url);
      await session.send("Fetch.continueRequest", { requestId: e.requestId }).catch(() => {});
      return;
    }
    this.#options.onRefused({
      method: facts.method,
      origin: facts.target?.origin ?? `${facts.target?.scheme ?? "unknown"}:`,
      reason,
      // Lets the session's network log put the reason on the request it lists.
      ...(e.networkId ? { networkId: e.networkId } : {}),
    });
    await session.send("Fetch.failRequest", {
      requestId: e.requestId,
      errorReason: "BlockedByClient",
    }).catch(() => {});
  }
}

/** The facts of one paused request. */
export function requestFacts(
  e: Protocol.Fetch.RequestPausedEvent,
  frame: Facts["frame"],
  counters: SessionCounters,
): Facts {
  const type = e.resourceType;
  const method = e.request.method.toUpperCase();
  const initiator: Facts["initiator"] = e.redirectedRequestId
    ? "redirect"
    : SCRIPTED.has(type)
    ? "script"
    : type === "Document" && method !== "GET"
    ? "form"
    : "page";
  return {
    ...baseFacts("request", counters),
    target: targetOf(e.request.url),
    method,
    resource_type: type.toLowerCase(),
    initiator,
    frame,
  };
}
