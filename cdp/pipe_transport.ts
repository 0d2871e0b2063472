/**
 * NUL-framed JSON transport over the two extra file descriptors Chromium opens for
 * `--remote-debugging-pipe` (fd 3: we write, fd 4: we read).
 *
 * What the browser sends is shaped by the pages it runs (one `console.log` of a huge string
 * is one huge message), so nothing here may throw out of a stream event, where it would
 * end the whole runtime: a message over the cap or not UTF-8 ends this transport with a
 * fault, and its owner kills the browser.
 *
 * @module
 */
import { ByteRate, type ByteRateLimits } from "../shared/mod.ts";
import { CdpFaultError } from "./errors.ts";

/**
 * Bytes one message may have (its NUL not counted): 32 MiB. The largest message the runtime
 * asks for is the `DOMSnapshot.captureSnapshot` of a huge page (the 60,000-link fixture's is
 * about 20 MB), so 32 MiB leaves headroom for it while bounding what one message costs the
 * process: the bytes held while it streams in, then its string (up to twice its size in
 * UTF-16) and the parsed objects, all at once, for each of many sessions. Above that a
 * message only comes from a page forcing one (a huge `console.log`), and ends its browser.
 */
export const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/**
 * How fast one browser's CDP events are read (see `ByteRate` for the rule; replies to the
 * runtime's own commands are not counted, see `eventBytesRead`). Measured with the runtime's
 * own sessions navigating, snapshotting and reading the page log of the largest pages of the
 * corpus and a 60,000-link page (`bench/cdp_rate.ts`, docs/bench-results.md): events peaked at
 * 0.5 MiB/s over one second and 0.1 MiB/s over ten, while replies (the snapshots) ran at
 * 18 MiB/s. So a browser may keep 8 MiB/s of events up forever (16 times the peak, and twice
 * the rate at which the page log itself stops following a target), send 48 MiB at once
 * above it (one message at the cap and more), and is ended (`SESSION_FLOODING`) only after
 * 10 s over the rate, slowed to it all along.
 */
export const CDP_BYTE_RATE: Readonly<ByteRateLimits> = {
  bytesPerSec: 8 * 1024 * 1024,
  burstBytes: 48 * 1024 * 1024,
  floodMs: 10_000,
};

/** Minimal writable side of a Node stream, as `node:child_process` hands it out. */
export interface PipeWritable {
  write(chunk: string | Uint8Array): boolean;
  end(): void;
  on(event: "error", listener: (err: Error) => void): unknown;
}

/** Minimal readable side of a Node stream. */
export interface PipeReadable {
  /** Stops `data` events (the pipe fills, and the browser's writes wait) until `resume`. */
  pause(): unknown;
  resume(): unknown;
  on(event: "data", listener: (chunk: Uint8Array | string) => void): unknown;
  on(event: "close" | "end", listener: () => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
}

/** Options of a `PipeTransport`. */
export interface PipeTransportOptions {
  /** Bytes one message may have; default `MAX_MESSAGE_BYTES`. */
  maxMessageBytes?: number;
  /** Where the transport's own failures are logged (codes only); default: nowhere. */
  log?: (line: string) => void;
  /**
   * How fast the browser's bytes are read (default `CDP_BYTE_RATE`): past the rate the pipe
   * is paused, and a browser over it for too long is ended (`SESSION_FLOODING`). `false`
   * reads as fast as the browser writes (a control measuring what a page makes it decode).
   */
  byteRate?: ByteRateLimits | false;
  /** The meter's clock, in milliseconds (tests); default `performance.now`. */
  now?: () => number;
}

/** One message-oriented duplex channel to the browser. */
export class PipeTransport {
  #writable: PipeWritable;
  #readable: PipeReadable;
  /** The browser's intake meter; undefined when unmetered. */
  readonly #meter: ByteRate | undefined;
  #bytesRead = 0;
  #eventBytesRead = 0;
  /** Whether the message being read is an event (metered), not a reply to the runtime. */
  #event = true;
  /** Resumes reading after a pause; cleared when the pipe closes. */
  #resumeTimer: ReturnType<typeof setTimeout> | undefined;
  /** The unfinished message's bytes so far, and their total. */
  #parts: Uint8Array[] = [];
  #size = 0;
  readonly #max: number;
  readonly #log: (line: string) => void;
  // Fatal: a message that is not UTF-8 is refused, never patched up with U+FFFD. Checking
  // costs Deno's decoder about 3x the time, so all-ASCII messages (most of them, the huge
  // ones among them) skip it: for ASCII the lenient decoder's output is exact.
  #strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  #lenient = new TextDecoder("utf-8", { ignoreBOM: true });
  #closed = false;
  #fault: CdpFaultError | undefined;
  /** Called with each complete message text. */
  onmessage: (message: string) => void = () => {};
  /** Called once when the pipe ends; with the fault when the transport ended it. */
  onclose: (fault?: CdpFaultError) => void = () => {};

  constructor(writable: PipeWritable, readable: PipeReadable, options: PipeTransportOptions = {}) {
    this.#writable = writable;
    this.#readable = readable;
    const rate = options.byteRate ?? CDP_BYTE_RATE;
    this.#meter = rate === false ? undefined : new ByteRate(rate, options.now);
    this.#max = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    this.#log = options.log ?? (() => {});
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

  /** Why the transport ended the pipe itself, if it did. */
  get fault(): CdpFaultError | undefined {
    return this.#fault;
  }

  /** Every byte read from the browser so far. */
  get bytesRead(): number {
    return this.#bytesRead;
  }

  /**
   * Bytes of events read so far: what the meter counts. Replies to the runtime's own commands
   * are not counted: their size and number follow the agent's calls (a huge page's snapshot is
   * ~20 MB, once per call), while events are what a page can make the browser send unasked.
   */
  get eventBytesRead(): number {
    return this.#eventBytesRead;
  }

  /** Whether reading is paused now because the browser sent too fast. */
  get slowed(): boolean {
    return this.#resumeTimer !== undefined;
  }

  /** Bytes of the unfinished message held now (bounded by the cap). */
  get bufferedBytes(): number {
    return this.#size;
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
    this.#endWritable();
    this.#markClosed();
  }

  #onData(chunk: Uint8Array | string): void {
    // After a fault nothing more is read: the browser is being killed, and what it still
    // sends is discarded as it arrives rather than held.
    if (this.#closed) return;
    try {
      const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
      this.#bytesRead += bytes.length;
      const metered = this.#frames(bytes);
      this.#eventBytesRead += metered;
      const pace = this.#meter?.take(metered);
      if (this.#closed || !pace) return;
      if (pace.kind === "flood") {
        this.#fail(
          new CdpFaultError(
            "SESSION_FLOODING",
            "the browser sent CDP events faster than the runtime's byte-rate cap for too long",
          ),
        );
      } else if (pace.kind === "wait") this.#pause(pace.ms);
    } catch (err) {
      // Nothing above is meant to throw; if it does, this pipe ends, never the process.
      this.#fail(
        new CdpFaultError("CDP_LISTENER_FAILED", "the CDP pipe failed reading a message", {
          cause: err,
        }),
      );
    }
  }

  /**
   * Reads nothing more for `ms`: what the browser sends meanwhile waits in the pipe, then in
   * the browser (whose writes block), never in this process.
   */
  #pause(ms: number): void {
    if (this.#resumeTimer !== undefined) return;
    this.#readable.pause();
    this.#resumeTimer = setTimeout(() => {
      this.#resumeTimer = undefined;
      if (!this.#closed) this.#readable.resume();
    }, ms);
  }

  /**
   * Splits `bytes` into messages and delivers each finished one; returns how many of them
   * belong to events (what the meter counts).
   */
  #frames(bytes: Uint8Array): number {
    let start = 0;
    let metered = 0;
    while (start < bytes.length && !this.#closed) {
      const nul = bytes.indexOf(0, start);
      const end = nul < 0 ? bytes.length : nul;
      if (this.#size === 0 && this.#parts.length === 0) this.#event = !isReply(bytes, start, end);
      if (this.#event) metered += end - start;
      // Counted as it streams in: a message over the cap is refused at its first byte too
      // many, before the rest of it is ever held.
      if (this.#size + (end - start) > this.#max) {
        this.#fail(
          new CdpFaultError(
            "CDP_MESSAGE_TOO_LARGE",
            `the browser sent a message over ${this.#max} bytes`,
          ),
        );
        return metered;
      }
      if (nul < 0) {
        // Copied: the stream may reuse its chunk.
        this.#parts.push(bytes.slice(start));
        this.#size += end - start;
        return metered;
      }
      this.#parts.push(bytes.subarray(start, nul));
      start = nul + 1;
      const message = this.#decode();
      if (message === undefined) return metered;
      try {
        this.onmessage(message);
      } catch (err) {
        // The owner's handling failed on this message: its state for this browser is unknown.
        this.#fail(
          new CdpFaultError("CDP_LISTENER_FAILED", "handling a CDP message failed", {
            cause: err,
          }),
        );
        return metered;
      }
    }
    return metered;
  }

  /** The finished message's text, or undefined after failing the pipe. */
  #decode(): string | undefined {
    const parts = this.#parts;
    this.#parts = [];
    this.#size = 0;
    try {
      const bytes = concat(parts);
      return (isAscii(bytes) ? this.#lenient : this.#strict).decode(bytes);
    } catch (err) {
      this.#fail(
        new CdpFaultError("CDP_MESSAGE_MALFORMED", "the browser sent a message that is not UTF-8", {
          cause: err,
        }),
      );
      return undefined;
    }
  }

  #fail(fault: CdpFaultError): void {
    if (this.#closed) return;
    this.#fault = fault;
    this.#endWritable();
    this.#markClosed();
  }

  #endWritable(): void {
    try {
      this.#writable.end();
    } catch {
      // already gone
    }
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#resumeTimer !== undefined) {
      clearTimeout(this.#resumeTimer);
      this.#resumeTimer = undefined;
      // Drained, not left paused: what the dying browser still sends is discarded unread.
      try {
        this.#readable.resume();
      } catch {
        // already gone
      }
    }
    // An unterminated message at the end of the stream is never delivered.
    this.#parts = [];
    this.#size = 0;
    try {
      this.onclose(this.#fault);
    } catch (err) {
      this.#log(`pipe close handler failed: ${errorName(err)}`);
    }
  }
}

/** `{"id":`: how Chromium begins every reply to a command (events begin with `"method"`). */
const REPLY_PREFIX = new TextEncoder().encode('{"id":');

/**
 * Whether the message starting at `bytes[start]` is a reply to a command. Only Chromium's
 * framing is read here (a page's text is inside a JSON string, escaped); a reply whose first
 * bytes came split across reads is counted as an event, the safe side.
 */
function isReply(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start < REPLY_PREFIX.length) return false;
  for (let i = 0; i < REPLY_PREFIX.length; i++) {
    if (bytes[start + i] !== REPLY_PREFIX[i]) return false;
  }
  return true;
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

/** Whether every byte is below 0x80 (four at a time where aligned). */
function isAscii(bytes: Uint8Array): boolean {
  let i = 0;
  const n = bytes.length;
  while (i < n && (bytes.byteOffset + i) % 4 !== 0) if (bytes[i++] & 0x80) return false;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + i, (n - i) >> 2);
  for (let w = 0; w < words.length; w++) if (words[w] & 0x80808080) return false;
  for (i += words.length << 2; i < n; i++) if (bytes[i] & 0x80) return false;
  return true;
}

function errorName(err: unknown): string {
  return err instanceof Error ? err.name : typeof err;
}
