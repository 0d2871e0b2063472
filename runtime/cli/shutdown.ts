/**
 * How `omotai start` ends. Whichever way the client leaves (stdin reaching its end, SIGTERM,
 * SIGINT, SIGHUP, the parent process dying), the runtime is disposed (every session's
 * browser and profile directory, the egress proxy) within a bounded time, then the process
 * exits. A client that leaves no browser behind is the whole point: a runtime that outlives
 * its client keeps a Chromium running for nobody.
 *
 * @module
 */
import process from "node:process";
import { log } from "../log.ts";

/** The signals that end the runtime gracefully; a second one ends it at once. */
export const SHUTDOWN_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
type ShutdownSignal = typeof SHUTDOWN_SIGNALS[number];
const SIGNAL_NUMBERS: Record<ShutdownSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

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

/** What `serveUntilStopped()` needs to know. */
export interface LifecycleOptions {
  /** Resolves when the client has left on its own (stdio: the transport closed). */
  done: Promise<void>;
  /** Disposes the runtime: sessions, browsers, profiles, the egress proxy. */
  dispose: () => PromiseLike<void>;
  /** Also end when the parent process dies (stdio mode: the parent is the client). */
  watchParent: boolean;
  timeoutMs?: number;
}

/**
 * Waits until the client leaves or a shutdown signal arrives, then disposes the runtime
 * (bounded by `timeoutMs`). Returns the exit code: 0 after a clean shutdown, 1 when the
 * dispose failed or timed out. A second signal while shutting down exits at once.
 */
export async function serveUntilStopped(options: LifecycleOptions): Promise<number> {
  let reason: string | undefined;
  let resolveStop!: () => void;
  const stopped = new Promise<void>((r) => resolveStop = r);
  const stop = (why: string) => {
    reason ??= why;
    resolveStop();
  };
  const listeners: [ShutdownSignal, () => void][] = [];
  let signalled = false;
  for (const signal of SHUTDOWN_SIGNALS) {
    const listener = () => {
      // Only a second signal forces the exit: clients commonly close stdin and send SIGTERM
      // together, and that must not cut the cleanup short.
      if (signalled) {
        // Whoever signals twice will not wait; the browsers still exit when their CDP pipe
        // closes with this process, and the next start sweeps their profiles.
        log(`${signal} during shutdown: exiting without waiting for cleanup`);
        Deno.exit(128 + SIGNAL_NUMBERS[signal]);
      }
      signalled = true;
      stop(signal);
    };
    try {
      Deno.addSignalListener(signal, listener);
      listeners.push([signal, listener]);
    } catch {
      // Not every platform has every signal (Windows has no SIGHUP or SIGTERM).
    }
  }
  options.done.then(() => stop("client left"));
  let parent: Disposable | undefined;
  if (options.watchParent) parent = watchParent(() => stop("parent process gone"));

  await stopped;
  parent?.[Symbol.dispose]();
  log(`shutting down: ${reason}`);
  const timeoutMs = options.timeoutMs ?? SHUTDOWN_TIMEOUT_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), timeoutMs));
  const outcome = await Promise.race([
    Promise.resolve(options.dispose()).then(() => "disposed" as const, (err: unknown) => err),
    timeout,
  ]);
  clearTimeout(timer);
  for (const [signal, listener] of listeners) Deno.removeSignalListener(signal, listener);
  if (outcome === "timeout") {
    log(`SHUTDOWN_TIMEOUT: cleanup did not finish within ${timeoutMs} ms; exiting anyway`);
    return 1;
  }
  if (outcome !== "disposed") {
    log(`SHUTDOWN_FAILED: ${(outcome as Error)?.name ?? "error"}`);
    return 1;
  }
  return 0;
}

/**
 * Sessions whose teardown a shutdown must wait for, however it started. An MCP server's
 * onclose starts its session's dispose without awaiting it, and a second dispose call returns
 * at once; so every caller here shares the first call's promise, and `disposeAll()` returns
 * only when every browser and profile of a tracked session is gone.
 */
export class Teardowns {
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
