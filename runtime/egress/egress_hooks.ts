/**
 * The egress boundary as browser hooks: each launch gets its own proxy listener and the
 * flags that leave it the browser's only way out; each target gets, before it runs, the
 * tunnels the policy refused and (with `request_guard: all` or `documents`) request
 * interception. Built in `cli/policy_worlds.ts`, so the browser layer never imports egress.
 *
 * @module
 */
import type { BrowserHooksFactory } from "../browser/hooks.ts";
import type { Boundary } from "../gate/boundary.ts";
import { EgressLedger } from "./egress_ledger.ts";
import type { EgressProxy } from "./egress_proxy.ts";
import { GuardTickets } from "./guard_tickets.ts";
import { proxyFacts, proxyJudge, type WebSocketRule } from "./proxy_judge.ts";
import { RefusedHosts } from "./refused_hosts.ts";
import { type GuardPause, RequestGuard } from "./request_guard.ts";

/** What the hooks need. */
export interface EgressDeps {
  boundary: Boundary;
  proxy: EgressProxy;
  /** The policy's WebSocket rule (see `proxyJudge`). */
  websockets?: WebSocketRule;
  /** What the request guard pauses (default `all`). */
  pause?: GuardPause;
}

/** Hooks that put every session's browser behind the request guard and the proxy. */
export function egressHooks(
  { boundary, proxy, websockets, pause }: EgressDeps,
): BrowserHooksFactory {
  return (s) => {
    const who = () => ({ id: s.id, agent: s.agent });
    const counters = () => s.state.counters();
    // Tunnels the policy refused are refused in the browser from then on.
    const refusedHosts = new RefusedHosts((b) =>
      ledger.outcome({
        via: "learned",
        method: b.method,
        facts: proxyFacts({ type: "http", method: b.method, url: b.url }, counters())[0],
        reason: b.reason,
        networkId: b.requestId,
      })
    );
    // Every refusal of the session, whichever layer made it, goes here once.
    const ledger = new EgressLedger({
      boundary,
      session: who,
      notice: s.blocked,
      network: s.network,
      hosts: refusedHosts,
    });
    // What the guard allowed with page facts the proxy lets through on that verdict.
    const tickets = new GuardTickets();
    const guard = new RequestGuard({
      pause,
      boundary,
      session: who,
      counters,
      onBlocked: (blocked) => ledger.outcome({ via: "guard", blocked }),
      onAllowed: (method, url) => tickets.issue(method, url),
    });
    return {
      async beforeLaunch() {
        const judge = proxyJudge({ boundary, session: who, counters, websockets, tickets, ledger });
        const listener = await proxy.listen({
          ask: (question) => {
            // New domain rules void what was learned under the old ones.
            refusedHosts.sync(boundary.domainGeneration);
            return judge.ask(question);
          },
          refused: (question, reason) => judge.refused(question, reason),
        });
        return {
          args: egressArgs(listener.port, proxy.authority?.spkiPin),
          release: () => listener[Symbol.dispose](),
        };
      },
      prepareTarget: (t) => Promise.all([guard.install(t), refusedHosts.install(t)]).then(() => {}),
    };
  };
}

/**
 * Chromium flags that leave the proxy as the only way out: loopback is not bypassed, and
 * WebRTC may not send UDP outside the proxy (which speaks TCP only).
 */
export function egressArgs(port: number, spkiPin?: string): string[] {
  return [
    `--proxy-server=http://127.0.0.1:${port}`,
    "--proxy-bypass-list=<-loopback>",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
    "--dns-prefetch-disable",
    // The proxy's authority, trusted by this profile only and by its key alone: no other
    // certificate check is relaxed.
    ...(spkiPin ? [`--ignore-certificate-errors-spki-list=${spkiPin}`] : []),
  ];
}
