/**
 * The requests of one listener (one browser) that are waiting on their upstream: connecting
 * to it, for its answer's head, or while its body is relayed. Each browser opens only a few
 * connections per host (six): requests a tab's earlier documents left behind (keepalive
 * fetches, which Chromium lets outlive their page and which stopping the page's loads does
 * not cancel) can hold every one of them until the upstream answer bound, with the next
 * navigation queued inside the browser behind them. The runtime, when a navigation's main
 * response is late, has the proxy release (`release` in `proxy_protocol.ts`) the waits that
 * began before that navigation did: each is answered `504 UPSTREAM_RELEASED` (or, once its
 * answer's head was relayed, has its body cut short), its upstream connection closed.
 *
 * "Before" is told by the order of the runtime's own lines, not by a clock: a wait is stamped
 * with how many lines from the runtime the proxy had handled when it began. Every request is
 * judged before its upstream wait begins, by an answer line; so a request judged after the
 * runtime's mark (the count of lines it had sent) is stamped above it and is never released,
 * however the two processes' clocks and pipes run. Judgements still pending (a held write
 * waiting for the runtime or a human) are no upstream wait and are never here.
 *
 * @module
 */
import { closeQuietly } from "./byte_io.ts";
import type { ByteConn } from "./tls_terminate.ts";

/** One request waiting on its upstream; disposed when the wait is over. */
export interface UpstreamWait extends Disposable {
  /** Whether a release ended it (its upstream connection is then closed). */
  readonly released: boolean;
  /** The connection the wait is on now (a release closes it; closed at once if released). */
  hold(conn: ByteConn): void;
}

interface Entry {
  stamp: number;
  released: boolean;
  conn?: ByteConn;
}

/** The upstream waits of one listener. */
export class UpstreamWaits {
  readonly #waits = new Set<Entry>();
  readonly #stamp: () => number;

  /**
   * `stamp`: the proxy's count of lines handled from the runtime (the order a release's mark
   * is compared with); tests may pass their own.
   */
  constructor(stamp: () => number = () => 0) {
    this.#stamp = stamp;
  }

  /** A wait beginning now, stamped with the current line count. */
  begin(): UpstreamWait {
    const entry: Entry = { stamp: this.#stamp(), released: false };
    this.#waits.add(entry);
    return {
      get released() {
        return entry.released;
      },
      hold: (conn) => {
        entry.conn = conn;
        if (entry.released) closeQuietly(conn);
      },
      [Symbol.dispose]: () => {
        this.#waits.delete(entry);
      },
    };
  }

  /**
   * Ends every wait stamped at or below `mark` (begun before the runtime's line `mark + 1`
   * was handled): marked released, its connection closed. Returns how many.
   */
  release(mark: number): number {
    let n = 0;
    for (const entry of this.#waits) {
      if (entry.stamp > mark) continue;
      this.#waits.delete(entry);
      entry.released = true;
      if (entry.conn) closeQuietly(entry.conn);
      n++;
    }
    return n;
  }

  /** How many waits are under way (for tests). */
  get size(): number {
    return this.#waits.size;
  }
}
