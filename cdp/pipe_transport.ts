/**
 * NUL-framed JSON transport over the two extra file descriptors Chromium opens for
 * `--remote-debugging-pipe` (fd 3: we write, fd 4: we read).
 *
 * @module
 */

/** Minimal writable side of a Node stream, as `node:child_process` hands it out. */
export interface PipeWritable {
  write(chunk: string | Uint8Array): boolean;
  end(): void;
  on(event: "error", listener: (err: Error) => void): unknown;
}

/** Minimal readable side of a Node stream. */
export interface PipeReadable {
  on(event: "data", listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: "close" | "end", listener: () => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
}

/** One message-oriented duplex channel to the browser. */
export class PipeTransport {
  #writable: PipeWritable;
  #buffered: Uint8Array[] = [];
  #decoder = new TextDecoder();
  #closed = false;
  /** Called with each complete JSON message text. */
  onmessage: (message: string) => void = () => {};
  /** Called once when the read side ends or errors. */
  onclose: () => void = () => {};

  constructor(writable: PipeWritable, readable: PipeReadable) {
    this.#writable = writable;
    // EPIPE after the browser died arrives as an event; unhandled, it would crash the runtime.
    writable.on("error", () => this.#markClosed());
    readable.on("data", (chunk) => this.#onData(chunk));
    readable.on("close", () => this.#markClosed());
    readable.on("end", () => this.#markClosed());
    readable.on("error", () => this.#markClosed());
  }

  /** Whether the pipe has closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Sends one message; silently drops it once the pipe is closed (callers time out). */
  send(message: string): void {
    if (this.#closed) return;
    try {
      // One write per message: the browser sees a whole frame per read.
      this.#writable.write(message + "\0");
    } catch {
      this.#markClosed();
    }
  }

  /** Closes the write side. */
  close(): void {
    if (this.#closed) return;
    try {
      this.#writable.end();
    } catch {
      // already gone
    }
    this.#markClosed();
  }

  #onData(chunk: Uint8Array | string): void {
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
    let start = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 0) continue;
      this.#buffered.push(bytes.subarray(start, i));
      start = i + 1;
      const message = this.#decoder.decode(concat(this.#buffered));
      this.#buffered = [];
      try {
        this.onmessage(message);
      } catch (err) {
        // A listener bug must not kill the read loop.
        console.error("cdp: message handler failed:", err);
      }
    }
    if (start < bytes.length) this.#buffered.push(bytes.slice(start));
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose();
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0];
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}
