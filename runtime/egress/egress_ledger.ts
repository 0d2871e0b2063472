/**
 * One session's egress ledger: the one place a refused request's final outcome goes, once,
 * whichever layer refused it (the request guard, the proxy, or Chromium on a tunnel the
 * policy refused before). From here it reaches the audit (unless the boundary wrote the
 * verdict's row itself), the next snapshot's refused notice, the session's network log and,
 * for a tunnel the policy settled, the refused hosts.
 *
 * An allow is not reported: its row is the boundary's, written before the request may go,
 * and nothing else hears of it. A proxy request allowed and then refused after the DNS lookup
 * (or at its upstream) is reported once, by the proxy's `refused`, with that final reason.
 *
 * @module
 */
import type { RefusedRequest, SessionHandle } from "../browser/mod.ts";
import type { RequestContext } from "../gate/mod.ts";
import type { Facts } from "../policy/mod.ts";
import { bracketHost } from "../net/mod.ts";
import type { ProxyQuestion } from "../proxy/mod.ts";

/** A request's final refusal, as the layer that refused it knows it. */
export type EgressOutcome =
  /** The request guard refused a paused request; the boundary wrote its row. */
  | { via: "guard"; refused: RefusedRequest }
  /**
   * The proxy refused a question: by the boundary's verdict (`audited`, its row written), or
   * after an allow, by the boundary's address rule on the DNS answer or on its own account
   * (the ledger writes the row).
   */
  | { via: "proxy"; question: ProxyQuestion; facts: Facts; reason: string; audited: boolean }
  /** Chromium refused a page's request on a tunnel learned as refused (`refused_hosts.ts`). */
  | { via: "learned"; method: string; facts: Facts; reason: string; networkId: string };

/** Where a ledger's outcomes go. */
export interface EgressLedgerDeps {
  /** Writes the rows the boundary did not write; its domain rules' generation. */
  boundary: {
    recordRefusal(facts: Facts, ctx: RequestContext, reason: string): void;
    readonly domainGeneration: number;
  };
  session: () => { id: string; agent: string | null };
  /** The next snapshot's refused notice. */
  notice?: { add(request: RefusedRequest): void };
  /** The session's request log. */
  network?: SessionHandle["network"];
  /** Tunnels the policy settled, refused in the browser from then on. */
  hosts?: { learn(host: string, port: number, reason: string, generation: number): void };
}

/** What a ledger is to the layers that report to it. */
export interface EgressOutcomes {
  outcome(o: EgressOutcome): void;
}

/** Denials that say the runtime could not decide, not what the policy says of the facts. */
const UNSETTLED = new Set([
  "GATE_ERROR",
  "POLICY_ERROR",
  "AUDIT_UNAVAILABLE",
  "DOMAINS_UNREADABLE",
  "CONFIRM_UNAVAILABLE",
]);

/** One session's ledger. */
export class EgressLedger implements EgressOutcomes {
  readonly #deps: EgressLedgerDeps;

  constructor(deps: EgressLedgerDeps) {
    this.#deps = deps;
  }

  /** Takes one request's final refusal and hands it to each of its readers. */
  outcome(o: EgressOutcome): void {
    const { notice, network, hosts, boundary } = this.#deps;
    if (o.via === "guard") {
      notice?.add(o.refused);
      network?.refused(o.refused);
      return;
    }
    if (o.via === "proxy" ? !o.audited : true) this.#audit(o.facts, o.reason);
    if (o.via === "learned") {
      const refused = {
        method: o.method,
        origin: o.facts.target?.origin ?? "unknown:",
        reason: o.reason,
        networkId: o.networkId,
      };
      notice?.add(refused);
      network?.refused(refused);
      return;
    }
    // What `request_guard` does not pause reaches only the proxy, so its refusals are the
    // model's to hear of too; none repeats one of the guard's, which never reach the proxy.
    const { question, facts, reason } = o;
    if (question.type === "connect") {
      // Only those a page asked for are the model's to hear of, which the network log tells.
      network?.tunnelRefused(`${bracketHost(question.host)}:${question.port}`, reason);
      // The policy's own verdict on host and port alone: the same tunnel would be refused again.
      if (o.audited && !UNSETTLED.has(reason)) {
        hosts?.learn(question.host, question.port, reason, boundary.domainGeneration);
      }
    } else if (question.type === "http" && facts.target !== null) {
      network?.requestRefused(facts.method, question.url, reason);
      notice?.add({
        method: facts.method,
        origin: facts.target.origin ?? `${facts.target.scheme}:`,
        reason,
      });
    }
  }

  #audit(facts: Facts, reason: string): void {
    const who = this.#deps.session();
    this.#deps.boundary.recordRefusal(
      facts,
      { session: who.id, agent: who.agent, source: "proxy" },
      reason,
    );
  }
}
