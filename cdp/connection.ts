/**
 * A CDP connection multiplexing flattened sessions over one transport.
 *
 * @module
 */
import { CdpAbortedError, CdpClosedError, CdpError, CdpTimeoutError } from "./errors.ts";
import { CdpSession, type SessionHost } from "./session.ts";
import type { CallOptions, Protocol } from "./types.ts";

/** A message channel such as `PipeTransport`. */
export interface MessageTransport {
  send(message: string): void;
  close(): void;
  onmessage: (message: string) => void;
  onclose: () => void;
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

/** Owns the transport, request ids, and the map of live sessions. */
export class CdpConnection implements SessionHost {
  #transport: MessageTransport;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #sessions = new Map<string, CdpSession>();
  #closed = false;
  #closeListeners = new Set<() => void>();
  /** The browser-level session. */
  readonly root: CdpSession;

  constructor(transport: MessageTransport) {
    this.#transport = transport;
    this.root = new CdpSession(this);
    transport.onmessage = (m) => this.#onMessage(m);
    transport.onclose = () => this.#onClose();
  }

  /** Whether the transport has closed. */
  get closed(): boolean {
    return this.#closed;
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
      queueMicrotask(listener);
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
      this.#transport.send(JSON.stringify(message));
    });
  }

  /** Closes the transport; pending calls reject with `CdpClosedError`. */
  close(): void {
    this.#transport.close();
    this.#onClose();
  }

  #onMessage(text: string): void {
    let msg: IncomingMessage;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
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

  #onClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const [, p] of this.#pending) {
      p.cleanup();
      p.reject(new CdpClosedError(p.method));
    }
    this.#pending.clear();
    for (const id of [...this.#sessions.keys()]) this.#detachSession(id);
    this.root.markDetached();
    for (const l of [...this.#closeListeners]) {
      try {
        l();
      } catch (err) {
        console.error("cdp: close listener failed:", err);
      }
    }
    this.#closeListeners.clear();
  }
}
