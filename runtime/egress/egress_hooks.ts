/**
 * The egress boundary as browser hooks: each launch gets its own proxy listener and the
 * flags that leave it the browser's only way out; each target gets request interception
 * before it runs. Built in `cli/start.ts`, so the browser layer never imports egress.
 *
 * @module
 */
import type { BlockedRequest } from "../browser/blocked_notice.ts";
import type { BrowserHooksFactory } from "../browser/hooks.ts";
import type { Boundary } from "../gate/boundary.ts";
import type { EgressProxy } from "./egress_proxy.ts";
import { proxyJudge, type WebSocketRule } from "./proxy_judge.ts";
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
    const onBlocked = (r: BlockedRequest) => {
      s.blocked.add(r);
      s.network?.blocked(r);
    };
    const guard = new RequestGuard({ pause, boundary, session: who, counters, onBlocked });
    return {
      async beforeLaunch() {
        const listener = await proxy.listen(
          proxyJudge({
            boundary,
            session: who,
            counters,
            websockets,
            onBlocked,
            onRequestRefused: (method, url, reason) =>
              s.network?.requestRefused(method, url, reason),
            onTunnelRefused: (authority, reason) => s.network?.tunnelRefused(authority, reason),
          }),
        );
        return {
          args: egressArgs(listener.port, proxy.authority?.spkiPin),
          release: () => listener[Symbol.dispose](),
        };
      },
      prepareTarget: (t) => guard.install(t),
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
