/**
 * Turns an egress proxy question into policy facts and asks the boundary. A plain-HTTP
 * request carries its method and URL; a CONNECT tunnel only a host and port, so it stands
 * for the https origin on that port, or the http origin (WebSocket over `ws:`) on a port
 * that is not 443. Every verdict is the boundary's (`Boundary.judgeRequest`: the WebSocket
 * rule, the write hold, the guard's tickets among the rest); this file decides none.
 *
 * @module
 */
import type { Boundary, HeldWrite, ProxyRequest } from "../gate/mod.ts";
import { baseFacts, type Facts, type SessionCounters, targetOf } from "../policy/mod.ts";
import { bracketHost, normalizeOrigin } from "../net/mod.ts";
import type { ProxyJudge } from "./egress_proxy.ts";
import type { ProxyQuestion } from "../proxy/mod.ts";
import { EgressLedger, type EgressOutcomes } from "./egress_ledger.ts";

/** What a session's proxy judge needs. */
export interface ProxyJudgeOptions {
  boundary: Boundary;
  session: () => { id: string; agent: string | null };
  counters: () => SessionCounters;
  /**
   * Reads the request guard allowed (`guard_tickets.ts`), handed to the boundary with each
   * question: it lets such a request through on the guard's verdict and audit row, once.
   */
  tickets?: ProxyRequest["tickets"];
  /**
   * The session's egress ledger (`egress_ledger.ts`): told of every refusal once, its final
   * outcome. Without one, refusals the boundary did not audit are audited and nothing else.
   */
  ledger?: EgressOutcomes;
}

/** The facts a question stands for (alternatives for a tunnel). */
export function proxyFacts(question: ProxyQuestion, counters: SessionCounters): Facts[] {
  const base = baseFacts("request", counters);
  if (question.type === "malformed") {
    return [{ ...base, target: null, method: "UNKNOWN", resource_type: "proxy" }];
  }
  if (question.type === "http") {
    return [{
      ...base,
      target: targetOf(question.url),
      method: question.method.toUpperCase(),
      // What the browser says the request is for (`image`, `document`, `empty` for fetch
      // and XHR, `websocket`...), else the proxy's own type.
      resource_type: question.secFetch?.dest ?? "proxy",
    }];
  }
  const host = bracketHost(question.host);
  const schemes = question.port === 443 ? ["https"] : ["https", "http"];
  return schemes.map((scheme) => ({
    ...base,
    target: {
      scheme,
      origin: normalizeOrigin(`${scheme}://${host}:${question.port}`) ?? null,
      path: null,
    },
    method: "CONNECT",
    resource_type: "tunnel",
  }));
}

/**
 * The request a question holds whole (a write's body; none for a read), for the session's
 * write hold and the credential check.
 */
function heldWrite(question: ProxyQuestion): HeldWrite | undefined {
  if (question.type !== "http") return undefined;
  let body: Uint8Array = new Uint8Array();
  try {
    if (question.body) body = Uint8Array.fromBase64(question.body.base64);
  } catch {
    return undefined;
  }
  return {
    // As the page spelled it: that is what leaves (`patch` is not `PATCH` to a server).
    method: question.method,
    url: question.url,
    contentType: question.body?.contentType ?? null,
    body,
    headers: question.headers ?? [],
    ...(question.secFetch?.dest ? { dest: question.secFetch.dest } : {}),
    ...(question.secFetch?.mode ? { mode: question.secFetch.mode } : {}),
  };
}

/** A judge for one session's proxy listener. */
export function proxyJudge(options: ProxyJudgeOptions): ProxyJudge {
  const context = () => {
    const who = options.session();
    return { session: who.id, agent: who.agent, source: "proxy" as const };
  };
  const ledger = options.ledger ??
    new EgressLedger({ boundary: options.boundary, session: options.session });
  /** One refusal, its final outcome; `audited` when the boundary wrote its row. */
  const refuse = (question: ProxyQuestion, facts: Facts, reason: string, audited: boolean) =>
    ledger.outcome({ via: "proxy", question, facts, reason, audited });
  return {
    async ask(question) {
      const facts = proxyFacts(question, options.counters());
      const request: ProxyRequest = question.type === "http"
        ? {
          write: heldWrite(question),
          ...(question.upgrade !== undefined ? { upgrade: question.upgrade } : {}),
          ...(options.tickets ? { tickets: options.tickets } : {}),
        }
        : {};
      const j = await options.boundary.judgeRequest(facts, context(), request);
      const allow = j.decision === "allow";
      if (!allow) refuse(question, facts[0], j.reason, true);
      return {
        allow,
        reason: j.reason,
        // Whether the origin may be private: the proxy applies the boundary's address rule
        // to the DNS answer with it (`net/address_rule.ts`).
        exact: facts.some((f) => options.boundary.isExactlyAllowed(f.target?.origin)),
      };
    },
    refused(question, reason) {
      refuse(question, proxyFacts(question, options.counters())[0], reason, false);
    },
  };
}
