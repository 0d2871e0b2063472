/**
 * How `omotai start` ends. Whichever way the client leaves (stdin reaching its end, SIGTERM,
 * SIGINT, SIGHUP, the parent process dying), the runtime is disposed (every session's
 * browser and profile directory, the egress proxy, the `runtime_stopped` row and the final
 * signed checkpoint) within a bounded time, then the process exits. Signals follow the rule
 * of `launcher/stop_signals.ts`: the same stop arriving twice never cuts the teardown short. A client that leaves no browser behind is the whole point: a runtime that outlives
 * its client keeps a Chromium running for nobody.
 *
 * @module
 */
import process from "node:process";
import { log } from "../mod.ts";
import {
  listenForStop,
  STOP_GRACE_MS,
  StopRule,
  type StopSignal,
  type StopVerdict,
} from "../launcher/mod.ts";

/**
 * Longest a graceful shutdown may take. An unresponsive browser's close takes about 6 s
 * (polite close, SIGTERM, SIGKILL, two seconds apart), so this trips only on something
 * worse; a browser that still runs then usually exits on its own when its CDP pipe closes
 * with this process, and the next start sweeps its profile.
 */
export const SHUTDOWN_TIMEOUT_MS = 8_000;

/** How often the parent process is looked at in stdio mode. */
export const PARENT_POLL_MS = 1_000;

/**
 * Resolves when stdin has reached its end, closed or failed. The SDK's stdio transport
 * listens only for data and errors, so a client that closes the pipe without killing the
 * runtime would otherwise leave it (and its browser) running forever.
 */
export function stdinEnded(): Promise<void> {
  return new Promise((resolve) => {
    if (process.stdin.readableEnded || process.stdin.destroyed) return resolve();
    const done = () => resolve();
    process.stdin.once("end", done);
    process.stdin.once("close", done);
    process.stdin.once("error", done);
  });
}

/**
 * Calls `onGone` once the parent process has died. A client may leave stdin open after it
 * dies (a grandchild inherited it), so stdin alone does not prove the client is there;
 * an orphan is re-parented (to init or a subreaper), which changes `Deno.ppid`.
 * `Deno.ppid` needs no permission.
 */
export function watchParent(onGone: () => void, intervalMs = PARENT_POLL_MS): Disposable {
  const parent = Deno.ppid;
  const timer = setInterval(() => {
    if (Deno.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  // The watch alone must not keep the process alive.
  Deno.unrefTimer(timer);
  return { [Symbol.dispose]: () => clearInterval(timer) };
}

/** How long the audit's seal may take after the teardown outlasted its bound. */
export const SEAL_TIMEOUT_MS = 2_000;

/**
 * The runtime's stop signals, listened for from before the start (a stop that arrives while
 * the runtime starts is kept, and the teardown runs once the start is done, instead of the
 * signal's default action killing the process with nothing undone). A repeat within the
 * grace period is logged once and ignored; a forcing one exits at once.
 */
export class StopSignals implements Disposable {
  readonly #listening: Disposable;
  readonly #exit: (code: number) => void;
  #repeats = 0;
  #resolve!: (signal: StopSignal) => void;
  /** Resolves with the first stop signal. */
  readonly first: Promise<StopSignal> = new Promise((r) => this.#resolve = r);

  /** Starts listening; `exit` (tests) replaces `Deno.exit` for a forcing signal. */
  constructor(options: { rule?: StopRule; exit?: (code: number) => void } = {}) {
    this.#exit = options.exit ?? ((code) => Deno.exit(code));
    this.#listening = listenForStop(options.rule ?? new StopRule(), (v) => this.#on(v));
  }

  /** How many repeats of the first stop were ignored. */
  get repeats(): number {
    return this.#repeats;
  }

  #on(verdict: StopVerdict): void {
    if (verdict.kind === "stop") return this.#resolve(verdict.signal);
    if (verdict.kind === "repeat") {
      if (this.#repeats++ > 0) return;
      log(
        `${verdict.signal} again ${
          Math.round(verdict.afterMs)
        } ms after the first: the same stop, ignored (one after ${
          STOP_GRACE_MS / 1000
        } s exits at once)`,
      );
      return;
    }
    // Whoever signals again after the grace period will not wait; the browsers still exit
    // when their CDP pipe closes with this process, and the next start sweeps their profiles.
    log(`${verdict.signal} during shutdown: exiting without waiting for cleanup`);
    this.#exit(verdict.code);
  }

  [Symbol.dispose](): void {
    this.#listening[Symbol.dispose]();
  }
}

/** What `serveUntilStopped()` needs to know. */
export interface LifecycleOptions {
  /** Resolves when the client has left on its own (stdio: the transport closed). */
  done: Promise<void>;
  /** Disposes the runtime: sessions, browsers, profiles, the egress proxy, the audit's end. */
  dispose: () => PromiseLike<void>;
  /**
   * Writes the `runtime_stopped` row and the final signed checkpoint when `dispose` outlasts
   * `timeoutMs` (they come last in its order): a hung browser must not leave the chain's
   * tail unsigned.
   */
  seal?: () => PromiseLike<void>;
  /** Also end when the parent process dies (stdio mode: the parent is the client). */
  watchParent: boolean;
  /** The stop signals, when listened for since before the start; else listened for here. */
  signals?: StopSignals;
  timeoutMs?: number;
}

/**
 * Waits until the client leaves or a stop signal arrives, then disposes the runtime (bounded
 * by `timeoutMs`, the audit sealed if that bound is reached). Returns the exit code: 0 after
 * a clean shutdown, 1 when the dispose failed or timed out. Signals: `StopSignals`.
 */
export async function serveUntilStopped(options: LifecycleOptions): Promise<number> {
  using signals = options.signals ?? new StopSignals();
  let reason: string | undefined;
  let resolveStop!: () => void;
  const stopped = new Promise<void>((r) => resolveStop = r);
  const stop = (why: string) => {
    reason ??= why;
    resolveStop();
  };
  signals.first.then(stop);
  options.done.then(() => stop("client left"));
  let parent: Disposable | undefined;
  if (options.watchParent) parent = watchParent(() => stop("parent process gone"));

  await stopped;
  parent?.[Symbol.dispose]();
  log(`shutting down: ${reason}`);
  const timeoutMs = options.timeoutMs ?? SHUTDOWN_TIMEOUT_MS;
  const outcome = await within(
    Promise.resolve(options.dispose()).then(() => "disposed" as const, (err: unknown) => err),
    timeoutMs,
  );
  if (outcome === "timeout") {
    log(`SHUTDOWN_TIMEOUT: cleanup did not finish within ${timeoutMs} ms; exiting anyway`);
    if (options.seal) {
      const seal = Promise.resolve().then(options.seal).catch((err: unknown) => {
        log(`shutdown: audit seal: ${(err as Error)?.name ?? "error"}`);
      });
      const sealed = await within(seal, SEAL_TIMEOUT_MS);
      if (sealed === "timeout") log("SHUTDOWN_TIMEOUT: the audit's seal did not finish");
    }
    return 1;
  }
  if (outcome !== "disposed") {
    log(`SHUTDOWN_FAILED: ${(outcome as Error)?.name ?? "error"}`);
    return 1;
  }
  return 0;
}

/** `work`'s outcome, or "timeout" after `ms`. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sessions whose teardown a shutdown must wait for, however it started. An MCP server's
 * onclose starts its session's dispose without awaiting it, and a second dispose call returns
 * at once; so every caller here shares the first call's promise, and `disposeAll()` returns
 * only when every browser and profile of a tracked session is gone.
 */
export class Disposals {
  readonly #pending = new Map<AsyncDisposable, () => Promise<void>>();

  /** Tracks `resource` until its dispose has finished; returns it. */
  track<T extends AsyncDisposable>(resource: T): T {
    const original = resource[Symbol.asyncDispose].bind(resource);
    let run: Promise<void> | undefined;
    const dispose = () =>
      run ??= Promise.resolve(original()).finally(() => {
        this.#pending.delete(resource);
      });
    Object.defineProperty(resource, Symbol.asyncDispose, { value: dispose, configurable: true });
    this.#pending.set(resource, dispose);
    return resource;
  }

  /** Number of tracked resources not yet disposed. */
  get size(): number {
    return this.#pending.size;
  }

  /** Disposes every tracked resource (joining teardowns already running). */
  async disposeAll(): Promise<void> {
    await Promise.all([...this.#pending.values()].map((dispose) => dispose().catch(() => {})));
  }
}
