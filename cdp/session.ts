/**
 * One CDP session: the browser (root) session or a flattened target session.
 *
 * @module
 */
import { CdpAbortedError, CdpClosedError, CdpTimeoutError } from "./errors.ts";
import type {
  CallOptions,
  CommandName,
  CommandParams,
  CommandResult,
  EventName,
  EventParams,
  Protocol,
} from "./types.ts";

/** What a session needs from its connection. */
export interface SessionHost {
  sendRaw(
    sessionId: string | undefined,
    method: string,
    params: unknown,
    options?: CallOptions,
  ): Promise<unknown>;
  /**
   * Told when a handler or detach listener throws or rejects (`CdpConnection` ends the
   * browser for it); without it the failure goes nowhere.
   */
  listenerFailed?(where: string, err: unknown): void;
}

type Handler = (params: unknown) => void;

/** A CDP session. `id` is undefined for the browser-level session. */
export class CdpSession {
  readonly id: string | undefined;
  /** The attached target, absent on the browser session. */
  readonly targetInfo: Protocol.Target.TargetInfo | undefined;
  /** The session whose auto-attach produced this one. */
  readonly parent: CdpSession | undefined;
  #host: SessionHost;
  #handlers = new Map<string, Set<Handler>>();
  #detached = false;
  #detachListeners = new Set<() => void>();

  constructor(
    host: SessionHost,
    id?: string,
    targetInfo?: Protocol.Target.TargetInfo,
    parent?: CdpSession,
  ) {
    this.#host = host;
    this.id = id;
    this.targetInfo = targetInfo;
    this.parent = parent;
  }

  /** Whether the target detached or the connection closed. */
  get detached(): boolean {
    return this.#detached;
  }

  /** Sends a typed command; rejects with `CdpError`, `CdpTimeoutError` or `CdpClosedError`. */
  send<M extends CommandName>(
    method: M,
    params?: CommandParams<M>,
    options?: CallOptions,
  ): Promise<CommandResult<M>> {
    if (this.#detached) return Promise.reject(new CdpClosedError(`session for ${method}`));
    return this.#host.sendRaw(this.id, method, params ?? {}, options) as Promise<
      CommandResult<M>
    >;
  }

  /** Subscribes to an event; returns the unsubscribe function. */
  on<E extends EventName>(event: E, handler: (params: EventParams<E>) => void): () => void {
    let set = this.#handlers.get(event);
    if (!set) this.#handlers.set(event, set = new Set());
    const h = handler as Handler;
    set.add(h);
    return () => set.delete(h);
  }

  /** Resolves with the next event `E` that satisfies `predicate`, bounded by a timeout. */
  waitFor<E extends EventName>(
    event: E,
    predicate: (params: EventParams<E>) => boolean = () => true,
    options: CallOptions = {},
  ): Promise<EventParams<E>> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      if (this.#detached) return reject(new CdpClosedError(`wait for ${event}`));
      if (options.signal?.aborted) return reject(new CdpAbortedError(`wait for ${event}`));
      const cleanup = () => {
        off();
        offDetach();
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      };
      const off = this.on(event, (p) => {
        let hit: boolean;
        try {
          hit = predicate(p);
        } catch (err) {
          // The caller's predicate failing fails its wait alone.
          cleanup();
          reject(err);
          return;
        }
        if (!hit) return;
        cleanup();
        resolve(p);
      });
      const offDetach = this.onDetach(() => {
        cleanup();
        reject(new CdpClosedError(`wait for ${event}`));
      });
      const timer = setTimeout(() => {
        cleanup();
        reject(new CdpTimeoutError(`wait for ${event}`, timeoutMs));
      }, timeoutMs);
      const onAbort = () => {
        cleanup();
        reject(new CdpAbortedError(`wait for ${event}`));
      };
      options.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Registers a callback run once when this session detaches. */
  onDetach(listener: () => void): () => void {
    if (this.#detached) {
      queueMicrotask(() => this.#guard("detach listener", listener));
      return () => {};
    }
    this.#detachListeners.add(listener);
    return () => this.#detachListeners.delete(listener);
  }

  /**
   * @internal Delivers an event to subscribers. A handler that throws, or returns a promise
   * that rejects, is reported to the host, never to the caller: an async handler's
   * rejection would otherwise be unhandled, which ends the whole process.
   */
  dispatch(method: string, params: unknown): void {
    const set = this.#handlers.get(method);
    if (!set) return;
    for (const h of [...set]) {
      // A handler before this one may have ended the connection: the rest see nothing.
      if (this.#detached) return;
      this.#guard(`handler of ${method}`, () => h(params));
    }
  }

  /** @internal Marks the session gone and notifies listeners. */
  markDetached(): void {
    if (this.#detached) return;
    this.#detached = true;
    for (const l of [...this.#detachListeners]) this.#guard("detach listener", l);
    this.#detachListeners.clear();
    this.#handlers.clear();
  }

  #guard(where: string, fn: () => unknown): void {
    const failed = (err: unknown) => {
      try {
        // A host without a reporter (a test's fake) has nowhere to log: `cdp/` never writes
        // to stderr itself.
        this.#host.listenerFailed?.(where, err);
      } catch {
        // Reporting failed too; nothing may leave this callback.
      }
    };
    try {
      const out = fn();
      if (isThenable(out)) out.then(undefined, failed);
    } catch (err) {
      failed(err);
    }
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null &&
    typeof (value as { then?: unknown }).then === "function";
}
