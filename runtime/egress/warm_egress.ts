/**
 * The egress of a browser started ahead of its session (`browser/warm_pool.ts`): its own
 * proxy listener from the start, whose every request is refused (`BROWSER_UNCLAIMED`) until a
 * session takes the browser over and binds its judge. A warm browser sits on `about:blank`;
 * whatever it might send before then leaves nothing.
 *
 * @module
 */
import type { LaunchExtras } from "../browser/hooks.ts";
import { log } from "../log.ts";
import { egressArgs } from "./egress_args.ts";
import type { EgressProxy, ProxyJudge } from "./egress_proxy.ts";

/**
 * What a warm browser's requests get before a session binds it. There is no session to audit
 * them under: the refusal is logged, without the request (its URL is page data).
 */
const UNCLAIMED: ProxyJudge = {
  ask: () => {
    log("warm browser: a request before any session took the browser refused (BROWSER_UNCLAIMED)");
    return Promise.resolve({ allow: false, reason: "BROWSER_UNCLAIMED", exact: false });
  },
  refused: () => {},
};

/** Where a warm listener's questions go: the unclaimed judge, then its session's. */
interface Route {
  judge: ProxyJudge;
}

/** A warm browser's launch extras: the proxy flags, and the judge its session binds. */
export class WarmEgress implements LaunchExtras {
  readonly args: string[];
  readonly #release: () => void;
  readonly #route: Route;
  #bound = false;

  constructor(args: string[], release: () => void, route: Route) {
    this.args = args;
    this.#release = release;
    this.#route = route;
  }

  /** Hands the browser's requests to `judge` from now on; once (a browser has one session). */
  bind(judge: ProxyJudge): boolean {
    if (this.#bound) return false;
    this.#bound = true;
    this.#route.judge = judge;
    return true;
  }

  release(): void {
    this.#release();
  }
}

/** Opens a listener whose questions go to whichever judge the extras are bound to. */
export async function warmEgress(proxy: EgressProxy): Promise<WarmEgress> {
  const route: Route = { judge: UNCLAIMED };
  const listener = await proxy.listen({
    ask: (question) => route.judge.ask(question),
    refused: (question, reason) => route.judge.refused(question, reason),
  });
  return new WarmEgress(
    egressArgs(listener.port, proxy.authority?.spkiPin),
    () => listener[Symbol.dispose](),
    route,
  );
}
