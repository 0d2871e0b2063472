/**
 * Idle sessions end: a session with no request and no answer still streaming for `idleMs`
 * is ended (its browser with it). A long tool call is not idleness: its answer streams until
 * the result. What counts as a request is the transport's to say (`Activity.touch`): a
 * Streamable HTTP GET that only waits for notifications is none, so a client that vanished
 * while holding one still times out.
 *
 * @module
 */

/** When a session was last active, and how many of its answers are still streaming. */
export class Activity {
  #lastSeen: number;
  #streaming = 0;

  constructor(now: number = Date.now()) {
    this.#lastSeen = now;
  }

  /** A request of the session arrived. */
  touch(now: number = Date.now()): void {
    this.#lastSeen = now;
  }

  /** True when no answer streams and the last activity is `idleMs` or more before `now`. */
  idle(now: number, idleMs: number): boolean {
    return this.#streaming === 0 && now - this.#lastSeen >= idleMs;
  }

  /**
   * `res` with its body passed through, the session active until the body has ended, failed
   * or been cancelled (whichever comes first; counted once), and active at that moment.
   */
  streaming(res: Response): Response {
    if (!res.body) return res;
    this.#streaming++;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      this.#streaming--;
      this.touch();
    };
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { value, done } = await reader.read();
          if (done) {
            finish();
            controller.close();
          } else controller.enqueue(value);
        } catch (err) {
          finish();
          controller.error(err);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    });
  }
}

/** Options of `IdleSweeper`. */
export interface IdleSweeperOptions<S extends { activity: Activity }> {
  /** How long a session may be idle. */
  idleMs: number;
  /** The sessions that may idle out, read anew at every sweep. */
  sessions: () => Iterable<S>;
  /** Ends a session found idle; must not throw (it runs on a timer). */
  end: (session: S) => void;
}

/**
 * Every `sweepEvery(idleMs)`, ends the sessions idle for `idleMs`. Its timer does not keep
 * the process alive; disposing it stops the sweeps (it belongs on the teardown of whatever
 * holds the sessions, registered there when made).
 */
export class IdleSweeper<S extends { activity: Activity }> implements Disposable {
  readonly #options: IdleSweeperOptions<S>;
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(options: IdleSweeperOptions<S>) {
    this.#options = options;
    this.#timer = setInterval(() => this.sweep(), sweepEvery(options.idleMs));
    Deno.unrefTimer(this.#timer);
  }

  /** Ends every session idle at `now`; returns how many. */
  sweep(now: number = Date.now()): number {
    // Collected first: ending a session takes it out of what `sessions` iterates.
    const idle = [...this.#options.sessions()]
      .filter((s) => s.activity.idle(now, this.#options.idleMs));
    for (const s of idle) this.#options.end(s);
    return idle.length;
  }

  [Symbol.dispose](): void {
    clearInterval(this.#timer);
  }
}

/**
 * How often sessions are swept for an idle timeout of `idleMs`: a quarter of it (a session
 * outlives its timeout by at most that), between 50 ms and a minute.
 */
export function sweepEvery(idleMs: number): number {
  return Math.max(50, Math.min(idleMs / 4, 60_000));
}
