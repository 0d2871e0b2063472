/**
 * Browsers started ahead of their sessions, so a new session's first call does not wait for
 * a launch. Each is a fresh profile that no session had before and none gets after: a session
 * takes one whole and it ends with that session. Refills run one launch at a time (a launch
 * is a second of both cores on a small machine), and an idle pool gives its memory back.
 *
 * @module
 */
import { describeError } from "../../cdp/mod.ts";
import type { WarmBrowser, WarmSource } from "./launch.ts";

/** What a pool needs. */
export interface WarmPoolOptions {
  /** Browsers kept ready; 0 keeps none. */
  size: number;
  /**
   * Starts one browser ahead of its session. `signal` aborts when the pool closes: the start
   * is called off (its browser killed) rather than waited out, so a runtime's teardown is not
   * held by a launch on a busy machine.
   */
  start(signal: AbortSignal): Promise<WarmBrowser>;
  /** After this long without a take the pool closes its browsers (default 5 min). */
  idleMs?: number;
  /**
   * Whether a take starts a replacement (default true). A stdio runtime serves one session:
   * its one warm browser is not replaced.
   */
  refill?: boolean;
  log(line: string): void;
}

/** How long a failed start keeps the pool from trying again. */
const RETRY_MS = 5_000;

/** Ready browsers, refilled in the background. */
export class WarmPool implements WarmSource, AsyncDisposable {
  readonly #options: WarmPoolOptions;
  readonly #ready: WarmBrowser[] = [];
  #filling: Promise<void> | undefined;
  /** A session waiting for the browser being started now (at most one). */
  #waiter: ((warm: WarmBrowser | undefined) => void) | undefined;
  #idle: ReturnType<typeof setTimeout> | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Aborted when the pool closes: calls off a start under way. */
  readonly #closing = new AbortController();
  /** Browsers started so far (a failed start included). */
  #started = 0;

  constructor(options: WarmPoolOptions) {
    this.#options = options;
  }

  /** Browsers ready now. */
  get ready(): number {
    return this.#ready.length;
  }

  /** Starts filling the pool; resolves when it is full (or a start failed). */
  fill(): Promise<void> {
    if (this.#closed || this.#options.size <= 0) return Promise.resolve();
    this.#filling ??= this.#refill().finally(() => this.#filling = undefined);
    this.#armIdle();
    return this.#filling;
  }

  /**
   * A ready browser that still runs; the pool refills behind it. With none ready but one
   * being started, the first session to ask waits for that one (it is ready sooner than a
   * launch of its own); anyone else gets none and launches its own.
   */
  async take(): Promise<WarmBrowser | undefined> {
    let warm: WarmBrowser | undefined;
    while ((warm = this.#ready.shift()) && gone(warm)) warm.browser.kill("SIGKILL");
    if (!warm && this.#filling && !this.#waiter && !this.#closed) {
      warm = await new Promise<WarmBrowser | undefined>((r) => this.#waiter = r);
    }
    if (this.#options.refill !== false) this.fill().catch(() => {});
    else if (warm) clearTimeout(this.#idle);
    return warm;
  }

  /** Hands `warm` to the waiting session, if one waits; else keeps it ready. */
  #hand(warm: WarmBrowser | undefined): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter) waiter(warm);
    else if (warm) this.#ready.push(warm);
  }

  async #refill(): Promise<void> {
    while (!this.#closed && (this.#ready.length < this.#options.size || this.#waiter)) {
      // Without refills the pool starts `size` browsers in all, whoever took them.
      if (this.#options.refill === false && this.#started >= this.#options.size) return;
      this.#started++;
      let warm: WarmBrowser;
      try {
        warm = await this.#options.start(this.#closing.signal);
      } catch (err) {
        this.#hand(undefined);
        // Closing while a browser started (the runtime's teardown) is not a failure to retry.
        if (this.#closed) return;
        this.#options.log(`warm pool: a browser did not start: ${describeError(err)}`);
        // Sessions launch their own meanwhile; the pool tries again later.
        clearTimeout(this.#retry);
        this.#retry = setTimeout(() => this.fill().catch(() => {}), RETRY_MS);
        return;
      }
      if (this.#closed) {
        this.#hand(undefined);
        await warm.browser.close(500).catch(() => {});
        return;
      }
      this.#hand(warm);
    }
  }

  /** After `idleMs` without a take, the ready browsers go; the next take refills. */
  #armIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      const idle = this.#ready.splice(0);
      if (idle.length > 0) this.#options.log(`warm pool: idle, closed ${idle.length} browser(s)`);
      for (const w of idle) w.browser.kill("SIGKILL");
    }, this.#options.idleMs ?? 300_000);
  }

  /** Ends every ready browser; nothing is started after. */
  async [Symbol.asyncDispose](): Promise<void> {
    this.#closed = true;
    this.#closing.abort();
    this.#hand(undefined);
    clearTimeout(this.#idle);
    clearTimeout(this.#retry);
    // Short now: a start under way was called off and settles as its browser is killed.
    await this.#filling?.catch(() => {});
    const ready = this.#ready.splice(0);
    for (const w of ready) w.browser.kill("SIGKILL");
    await Promise.all(ready.map((w) => w.browser.exited));
  }
}

function gone(warm: WarmBrowser): boolean {
  return warm.browser.hasExited || warm.browser.connection.closed;
}

/** The default pool size for a machine with `cores` CPUs: one, two from eight cores on. */
export function defaultPoolSize(cores: number): number {
  return cores >= 8 ? 2 : 1;
}
