/**
 * The egress of a browser started ahead of its session (`browser/warm_pool.ts`): its own
 * proxy listener from the start, whose every request is refused (`BROWSER_UNCLAIMED`, with
 * an audit row) until a session takes the browser over and binds its judge. A warm browser sits on `about:blank`;
 * whatever it might send before then leaves nothing.
 *
 * @module
 */
import type { AuditSink } from "../store/mod.ts";
import type { LaunchExtras } from "../browser/mod.ts";
import { log, OmotaiError } from "../mod.ts";
import { bracketHost, normalizeOrigin } from "../net/mod.ts";
import { egressArgs } from "./egress_args.ts";
import type { EgressProxy, ProxyJudge } from "./egress_proxy.ts";

/**
 * What a warm browser's requests get before a session binds it: refused, each with an audit
 * row (no session, no agent: none has the browser yet) naming the origin and method only. A
 * row that cannot be written changes nothing: the answer is a refusal either way.
 */
function unclaimed(audit: AuditSink): ProxyJudge {
  return {
    ask: (question) => {
      // The tunnel's origin as the proxy's judge names it; a request's URL is cut to its
      // origin by the audit itself.
      const where = question.type === "connect"
        ? normalizeOrigin(`https://${bracketHost(question.host)}:${question.port}`) ?? null
        : question.type === "http"
        ? question.url
        : null;
      try {
        audit.append({
          kind: "request",
          source: "proxy",
          origin: where,
          method: question.type === "http" ? question.method : "CONNECT",
          decision: "deny",
          reason: "BROWSER_UNCLAIMED",
        });
      } catch (err) {
        log(
          `warm browser: refusal not audited: ${err instanceof OmotaiError ? err.code : "ERROR"}`,
        );
      }
      return Promise.resolve({ allow: false, reason: "BROWSER_UNCLAIMED", exact: false });
    },
    refused: () => {},
  };
}

/** Where a warm listener's questions go: the unclaimed judge, then its session's. */
interface Route {
  judge: ProxyJudge;
}

/** A warm browser's launch extras: the proxy flags, and the judge its session binds. */
export class WarmEgress implements LaunchExtras {
  readonly args: string[];
  /** Releases the browser's upstream waits judged before a mark (`ProxyListener.releaseWaits`). */
  readonly releaseWaits: (mark: number) => void;
  readonly #release: () => void;
  readonly #route: Route;
  #bound = false;

  constructor(
    args: string[],
    release: () => void,
    route: Route,
    releaseWaits: (mark: number) => void = () => {},
  ) {
    this.args = args;
    this.#release = release;
    this.#route = route;
    this.releaseWaits = releaseWaits;
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

/**
 * Opens a listener whose questions go to whichever judge the extras are bound to; until a
 * session binds one, every request is refused and audited to `audit`.
 */
export async function warmEgress(proxy: EgressProxy, audit: AuditSink): Promise<WarmEgress> {
  const route: Route = { judge: unclaimed(audit) };
  const listener = await proxy.listen({
    ask: (question) => route.judge.ask(question),
    refused: (question, reason) => route.judge.refused(question, reason),
    // Until a session binds it, a warm browser has loaded no page of anyone's.
    flooding: () => route.judge.flooding?.(),
  });
  return new WarmEgress(
    egressArgs(listener.port, proxy.authority?.spkiPin),
    () => listener[Symbol.dispose](),
    route,
    (mark) => listener.releaseWaits(mark),
  );
}
