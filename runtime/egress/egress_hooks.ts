/**
 * The egress boundary as browser hooks: each launch gets its own proxy listener and the
 * flags that leave it the browser's only way out; each target gets, before it runs, the
 * tunnels the policy refused and (with `request_guard: all` or `documents`) request
 * interception. Built in `cli/policy_worlds.ts`, so the browser layer never imports egress.
 *
 * @module
 */
import type { BrowserHooksFactory } from "../browser/mod.ts";
import type { Boundary } from "../gate/mod.ts";
import { EgressLedger } from "./egress_ledger.ts";
import { egressArgs } from "./egress_args.ts";
import type { EgressProxy, ProxyJudge } from "./egress_proxy.ts";
import { GuardTickets } from "./guard_tickets.ts";
import { proxyFacts, proxyJudge } from "./proxy_judge.ts";
import { RefusedHosts } from "./refused_hosts.ts";
import { type GuardPause, RequestGuard } from "./request_guard.ts";
import { WarmEgress } from "./warm_egress.ts";

/** What the hooks need. */
export interface EgressDeps {
  boundary: Boundary;
  proxy: EgressProxy;
  /** What the request guard pauses (default `all`). */
  pause?: GuardPause;
}

/** Hooks that put every session's browser behind the request guard and the proxy. */
export function egressHooks(
  { boundary, proxy, pause }: EgressDeps,
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
      notice: s.refused,
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
      onRefused: (refused) => ledger.outcome({ via: "guard", refused }),
      onAllowed: (method, url) => tickets.issue(method, url),
    });
    // One judge per browser: what its proxy listener asks, whether it was launched for this
    // session or started warm and taken over.
    const judgeOf = (): ProxyJudge => {
      const judge = proxyJudge({ boundary, session: who, counters, tickets, ledger });
      return {
        ask: (question) => {
          // New domain rules void what was learned under the old ones.
          refusedHosts.sync(boundary.domainGeneration);
          return judge.ask(question);
        },
        refused: (question, reason) => judge.refused(question, reason),
        flooding: () => s.flooding?.(),
      };
    };
    // The running browser's listener's release of its upstream waits (its launch's, or the
    // warm one's it took over): one browser's alone, never another session's.
    let releaseWaits: ((mark: number) => void) | undefined;
    return {
      async beforeLaunch() {
        const listener = await proxy.listen(judgeOf());
        releaseWaits = (mark) => listener.releaseWaits(mark);
        return {
          args: egressArgs(listener.port, proxy.authority?.spkiPin),
          release: () => listener[Symbol.dispose](),
        };
      },
      adopt: (extras) => {
        if (!(extras instanceof WarmEgress) || !extras.bind(judgeOf())) return false;
        releaseWaits = extras.releaseWaits;
        return true;
      },
      markNavigation: () => {
        const mark = proxy.mark();
        const release = releaseWaits;
        return () => release?.(mark);
      },
      prepareTarget: (t) => Promise.all([guard.install(t), refusedHosts.install(t)]).then(() => {}),
    };
  };
}
