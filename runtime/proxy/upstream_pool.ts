/**
 * Idle upstream connections of one proxy listener (one browser session), kept for the
 * session's next request to the same place: a page's two hundred subresources then cost two
 * hundred verdicts but a handful of TCP and TLS handshakes. A connection is filed under the
 * address that was judged, the port, and the TLS name it was verified for, so taking one
 * never skips a lookup rule or a certificate check; it is only ever taken after the request
 * it will carry was judged on its own.
 *
 * @module
 */
import type { ByteConn } from "./tls_terminate.ts";

/** Where an upstream connection goes: scheme, judged address, port and verified name. */
export function upstreamKey(secure: boolean, address: string, port: number, name: string): string {
  return `${secure ? "tls" : "tcp"} ${address} ${port} ${name}`;
}

interface Idle {
  conn: ByteConn;
  timer: ReturnType<typeof setTimeout>;
}

/** A session's idle upstream connections. */
export class UpstreamPool implements Disposable {
  readonly #idle = new Map<string, Idle[]>();
  readonly #perKey: number;
  readonly #idleMs: number;
  #closed = false;

  /**
   * At most `perKey` idle connections per key, each closed after `idleMs` unused (shorter
   * than the keep-alive timeout of common servers, so a taken one is rarely stale).
   */
  constructor(perKey = 8, idleMs = 4_000) {
    this.#perKey = perKey;
    this.#idleMs = idleMs;
  }

  /** The connection filed last under `key`, if any (removed from the pool). */
  take(key: string): ByteConn | undefined {
    const list = this.#idle.get(key);
    const idle = list?.pop();
    if (list?.length === 0) this.#idle.delete(key);
    if (!idle) return undefined;
    clearTimeout(idle.timer);
    return idle.conn;
  }

  /** Files `conn` under `key`, or closes it when the pool is full or closed. */
  give(key: string, conn: ByteConn): void {
    const list = this.#idle.get(key) ?? [];
    if (this.#closed || list.length >= this.#perKey) return closeQuietly(conn);
    const idle: Idle = {
      conn,
      timer: setTimeout(() => {
        const at = list.indexOf(idle);
        if (at >= 0) list.splice(at, 1);
        if (list.length === 0 && this.#idle.get(key) === list) this.#idle.delete(key);
        closeQuietly(conn);
      }, this.#idleMs),
    };
    // An idle connection must not keep the proxy (or a test) alive.
    Deno.unrefTimer(Number(idle.timer));
    list.push(idle);
    this.#idle.set(key, list);
  }

  /** How many connections are idle (for tests). */
  get size(): number {
    let n = 0;
    for (const list of this.#idle.values()) n += list.length;
    return n;
  }

  /** Closes every idle connection; later ones given are closed at once. */
  [Symbol.dispose](): void {
    this.#closed = true;
    for (const list of this.#idle.values()) {
      for (const idle of list) {
        clearTimeout(idle.timer);
        closeQuietly(idle.conn);
      }
    }
    this.#idle.clear();
  }
}

function closeQuietly(conn: ByteConn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}
