/**
 * A CDP connection multiplexing flattened sessions over one transport.
 *
 * @module
 */
import {
  CdpAbortedError,
  CdpClosedError,
  CdpError,
  CdpFaultError,
  CdpLayerError,
  CdpTimeoutError,
} from "./errors.ts";
import { CdpSession, type SessionHost } from "./session.ts";
import type { CallOptions, Protocol } from "./types.ts";

/** A message channel such as `PipeTransport`. */
export interface MessageTransport {
  send(message: string): void;
  close(): void;
  onmessage: (message: string) => void;
  /** Called once when the channel ends; with the fault when the transport ended it. */
  onclose: (fault?: CdpFaultError) => void;
}

/**
 * Where the CDP layer logs (codes, counts and names of failures, never message contents).
 * `cdp/` imports nothing of the runtime, so the runtime hands in its own logger.
 */
export type CdpLog = (line: string) => void;

/** Options of a `CdpConnection`. */
export interface ConnectionOptions {
  /** Default: nothing is logged (the runtime always hands in its `log()`). */
  log?: CdpLog;
}

interface Pending {
  method: string;
  sessionId: string | undefined;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  cleanup: () => void;
}

interface IncomingMessage {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: string };
  sessionId?: string;
}

/** Default bound for any command. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Owns the transport, request ids, and the map of live sessions. Whatever the browser sends
 * and whatever the handlers of its events do, nothing escapes to the caller's process: a
 * message that cannot be taken or a handler that throws ends this connection with a
 * `CdpFaultError` (`fault`), which its owner turns into killing this one browser.
 */
export class CdpConnection implements SessionHost {
  #transport: MessageTransport;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #sessions = new Map<string, CdpSession>();
  #closed = false;
  #fault: CdpFaultError | undefined;
  #closeListeners = new Set<() => void>();
  readonly #log: CdpLog;
  /** The browser-level session. */
  readonly root: CdpSession;

  constructor(transport: MessageTransport, options: ConnectionOptions = {}) {
    this.#transport = transport;
    this.#log = options.log ?? (() => {});
    this.root = new CdpSession(this);
    transport.onmessage = (m) => this.#onMessage(m);
    transport.onclose = (fault) => this.#onClose(fault);
  }

  /** Whether the transport has closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Why the connection was ended by the runtime rather than the browser, if it was. */
  get fault(): CdpFaultError | undefined {
    return this.#fault;
  }

  /** Logs one line through the owner's logger (codes and names only). */
  log(line: string): void {
    try {
      this.#log(line);
    } catch {
      // A logger that fails has nowhere left to report to.
    }
  }

  /**
   * Ends the connection because of `fault`: pending calls and waits reject with it, every
   * session detaches, close listeners run. The first fault is the one kept.
   */
  fail(fault: CdpFaultError): void {
    if (this.#closed) return;
    this.#fault = fault;
    this.log(`connection ended: ${fault.code}`);
    this.#transport.close();
    this.#onClose();
  }

  /**
   * @internal A handler of an event (or a detach listener, a tracker listener) threw or
   * rejected. A failed browser call inside it (`CdpLayerError`: timeout, closed target) is
   * that handler's loss alone; anything else is a fault of the runtime's own state for this
   * browser, which then ends.
   */
  listenerFailed(where: string, err: unknown): void {
    if (err instanceof CdpLayerError) {
      // After the end every handler's pending call fails that way: nothing more to say.
      if (!this.#closed) this.log(`${where}: ${err.code}`);
      return;
    }
    this.log(`${where} failed: ${describeError(err)}`);
    this.fail(
      new CdpFaultError("CDP_LISTENER_FAILED", `a handler of the browser's events failed`, {
        cause: err,
      }),
    );
  }

  /** The live session with this id, if any. */
  session(id: string): CdpSession | undefined {
    return this.#sessions.get(id);
  }

  /** All live target sessions. */
  sessions(): CdpSession[] {
    return [...this.#sessions.values()];
  }

  /** Registers a callback run once when the connection closes. */
  onClose(listener: () => void): () => void {
    if (this.#closed) {
      queueMicrotask(() => this.#runCloseListener(listener));
      return () => {};
    }
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  /** @internal Sends a command on behalf of a session. */
  sendRaw(
    sessionId: string | undefined,
    method: string,
    params: unknown,
    options: CallOptions = {},
  ): Promise<unknown> {
    if (this.#closed) return Promise.reject(new CdpClosedError(method));
    if (options.signal?.aborted) return Promise.reject(new CdpAbortedError(method));
    const id = this.#nextId++;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        cleanup();
        reject(new CdpTimeoutError(method, timeoutMs));
      }, timeoutMs);
      const onAbort = () => {
        this.#pending.delete(id);
        cleanup();
        reject(new CdpAbortedError(method));
      };
      options.signal?.addEventListener("abort", onAbort, { once: true });
      const cleanup = () => {
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      };
      this.#pending.set(id, { method, sessionId, resolve, reject, cleanup });
      const message: Record<string, unknown> = { id, method, params };
      if (sessionId) message.sessionId = sessionId;
      let text: string;
      try {
        text = JSON.stringify(message);
      } catch (err) {
        // Params that cannot be serialized (a cycle, a BigInt) fail this call alone.
        this.#pending.delete(id);
        cleanup();
        reject(err);
        return;
      }
      this.#transport.send(text);
    });
  }

  /** Closes the transport; pending calls reject with `CdpClosedError`. */
  close(): void {
    this.#transport.close();
    this.#onClose();
  }

  #onMessage(text: string): void {
    if (this.#closed) return;
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      // Never the parser's message: it quotes the text, which is page data.
      this.#malformed("not JSON");
      return;
    }
    const problem = shapeProblem(msg);
    if (problem) {
      this.#malformed(problem);
      return;
    }
    try {
      this.#route(msg as IncomingMessage);
    } catch (err) {
      this.listenerFailed("routing a message", err);
    }
  }

  #malformed(what: string): void {
    this.fail(new CdpFaultError("CDP_MESSAGE_MALFORMED", `the browser sent a message: ${what}`));
  }

  #route(msg: IncomingMessage): void {
    if (typeof msg.id === "number") {
      const pending = this.#pending.get(msg.id);
      if (!pending) return;
      this.#pending.delete(msg.id);
      pending.cleanup();
      if (msg.error) {
        pending.reject(new CdpError(pending.method, msg.error.code, msg.error.message));
      } else pending.resolve(msg.result ?? {});
      return;
    }
    if (!msg.method) return;
    const target = msg.sessionId ? this.#sessions.get(msg.sessionId) : this.root;
    if (!target) return;
    if (msg.method === "Target.attachedToTarget") {
      const p = msg.params as Protocol.Target.AttachedToTargetEvent;
      this.#sessions.set(p.sessionId, new CdpSession(this, p.sessionId, p.targetInfo, target));
    }
    if (msg.method === "Target.detachedFromTarget") {
      const p = msg.params as Protocol.Target.DetachedFromTargetEvent;
      target.dispatch(msg.method, msg.params);
      this.#detachSession(p.sessionId);
      return;
    }
    target.dispatch(msg.method, msg.params);
  }

  #detachSession(sessionId: string): void {
    const s = this.#sessions.get(sessionId);
    if (!s) return;
    this.#sessions.delete(sessionId);
    for (const [id, p] of this.#pending) {
      if (p.sessionId !== sessionId) continue;
      this.#pending.delete(id);
      p.cleanup();
      p.reject(new CdpClosedError(`session for ${p.method}`));
    }
    // Children of a detached session go with it.
    for (const child of [...this.#sessions.values()]) {
      if (child.parent === s && child.id) this.#detachSession(child.id);
    }
    s.markDetached();
  }

  #onClose(fault?: CdpFaultError): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#fault ??= fault;
    if (fault && this.#fault === fault) this.log(`connection ended: ${fault.code}`);
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) {
      p.cleanup();
      // The call that was waiting hears why its browser went, when the runtime ended it.
      p.reject(this.#fault ?? new CdpClosedError(p.method));
    }
    for (const id of [...this.#sessions.keys()]) this.#detachSession(id);
    this.root.markDetached();
    for (const l of [...this.#closeListeners]) this.#runCloseListener(l);
    this.#closeListeners.clear();
  }

  #runCloseListener(listener: () => void): void {
    const failed = (err: unknown) => this.log(`close listener failed: ${describeError(err)}`);
    try {
      const out: unknown = listener();
      if (out instanceof Promise) out.catch(failed);
    } catch (err) {
      failed(err);
    }
  }
}

/** What is wrong with a parsed message's shape, or undefined when it can be routed. */
function shapeProblem(msg: unknown): string | undefined {
  if (typeof msg !== "object" || msg === null || Array.isArray(msg)) return "not an object";
  const m = msg as Record<string, unknown>;
  if (m.id !== undefined && typeof m.id !== "number") return "an id that is not a number";
  if (m.method !== undefined && typeof m.method !== "string") return "a method that is not text";
  if (m.sessionId !== undefined && typeof m.sessionId !== "string") {
    return "a session id that is not text";
  }
  if (m.error !== undefined && (typeof m.error !== "object" || m.error === null)) {
    return "an error that is not an object";
  }
  if (m.method === "Target.attachedToTarget") {
    const p = m.params as Record<string, unknown> | undefined;
    if (
      typeof p !== "object" || p === null || typeof p.sessionId !== "string" ||
      typeof p.targetInfo !== "object" || p.targetInfo === null
    ) return "an attach event without its session";
  }
  if (m.method === "Target.detachedFromTarget") {
    const p = m.params as Record<string, unknown> | undefined;
    if (typeof p !== "object" || p === null || typeof p.sessionId !== "string") {
      return "a detach event without its session";
    }
  }
  return undefined;
}

/**
 * An error's name and where it was thrown (the first frames of its stack): never its
 * message, which may quote page data.
 */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  const where = (err.stack ?? "").split("\n").map((l) => l.trim())
    .filter((l) => l.startsWith("at ")).slice(0, 2).join(" ");
  return where ? `${err.name} ${where}` : err.name;
}
