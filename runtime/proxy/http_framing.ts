/**
 * Where an HTTP/1.1 response body ends (RFC 9112 §6.3), so the egress proxy can relay it
 * byte for byte and still know when the connection is free again: for the browser's next
 * request, and for the next request to the same upstream. Bodies are never decoded, only
 * delimited; anything the proxy cannot delimit ends both connections.
 *
 * @module
 */

/** How a response body is delimited. */
export type BodyFraming =
  /** No body (HEAD, 1xx, 204, 304). */
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  /** Until the upstream closes: neither connection can carry another message. */
  | { kind: "close" };

/**
 * The framing of a response to `method` with `status` and `headers`; `"invalid"` for a
 * Content-Length that is not one number, or one sent beside Transfer-Encoding (the
 * ambiguity request smuggling lives on), which a proxy must not relay.
 */
export function responseFraming(
  method: string,
  status: number,
  headers: readonly (readonly [string, string])[],
): BodyFraming | "invalid" {
  if (method === "HEAD" || (status >= 100 && status < 200) || status === 204 || status === 304) {
    return { kind: "none" };
  }
  const lengths = new Set<string>();
  let codings: string[] | undefined;
  for (const [k, v] of headers) {
    const key = k.toLowerCase();
    if (key === "content-length") {
      for (const part of v.split(",")) lengths.add(part.trim());
    } else if (key === "transfer-encoding") {
      codings = [...(codings ?? []), ...v.split(",").map((c) => c.trim().toLowerCase())];
    }
  }
  if (codings) {
    if (lengths.size > 0) return "invalid";
    return codings.at(-1) === "chunked" ? { kind: "chunked" } : { kind: "close" };
  }
  if (lengths.size === 0) return { kind: "close" };
  const [only] = lengths;
  if (lengths.size !== 1 || !/^\d{1,15}$/.test(only)) return "invalid";
  return { kind: "length", length: Number(only) };
}

/** Longest chunk-size line (with extensions) and trailer line accepted. */
const MAX_LINE = 4096;

const CR = 13;
const LF = 10;

type State =
  | "size"
  | "ext"
  | "size_lf"
  | "data"
  | "data_cr"
  | "data_lf"
  | "trailer_start"
  | "trailer"
  | "trailer_lf"
  | "final_lf"
  | "done"
  | "bad";

/**
 * Finds the end of a chunked body in the bytes fed to it, without copying or decoding: the
 * proxy relays what it was fed up to that end. Chunk sizes are capped at 2^52 bytes and
 * lines at 4 KiB.
 */
export class ChunkedScanner {
  #state: State = "size";
  #size = 0;
  #digits = 0;
  #left = 0;
  #line = 0;

  /** Whether the terminating chunk and trailers were seen. */
  get done(): boolean {
    return this.#state === "done";
  }

  /** Whether the bytes were not a chunked body. */
  get failed(): boolean {
    return this.#state === "bad";
  }

  /**
   * Scans `bytes` from `start`; returns the index just past the body's end, or -1 when the
   * body goes on past these bytes (or is malformed: see {@link failed}).
   */
  feed(bytes: Uint8Array, start = 0): number {
    let i = start;
    while (i < bytes.length) {
      const b = bytes[i];
      switch (this.#state) {
        case "size": {
          const d = hexValue(b);
          if (d >= 0) {
            if (++this.#digits > 13) return this.#fail();
            this.#size = this.#size * 16 + d;
          } else if (this.#digits === 0) return this.#fail();
          else if (b === CR) this.#state = "size_lf";
          else if (b === 0x3b || b === 0x20 || b === 0x09) {
            this.#state = "ext";
            this.#line = 0;
          } else return this.#fail();
          break;
        }
        case "ext":
          if (b === CR) this.#state = "size_lf";
          else if (++this.#line > MAX_LINE) return this.#fail();
          break;
        case "size_lf":
          if (b !== LF) return this.#fail();
          if (this.#size === 0) this.#state = "trailer_start";
          else {
            this.#left = this.#size;
            this.#state = "data";
          }
          break;
        case "data": {
          const n = Math.min(this.#left, bytes.length - i);
          this.#left -= n;
          i += n;
          if (this.#left === 0) this.#state = "data_cr";
          continue;
        }
        case "data_cr":
          if (b !== CR) return this.#fail();
          this.#state = "data_lf";
          break;
        case "data_lf":
          if (b !== LF) return this.#fail();
          this.#state = "size";
          this.#size = 0;
          this.#digits = 0;
          break;
        case "trailer_start":
          if (b === CR) this.#state = "final_lf";
          else {
            this.#state = "trailer";
            this.#line = 1;
          }
          break;
        case "trailer":
          if (b === CR) this.#state = "trailer_lf";
          else if (++this.#line > MAX_LINE) return this.#fail();
          break;
        case "trailer_lf":
          if (b !== LF) return this.#fail();
          this.#state = "trailer_start";
          break;
        case "final_lf":
          if (b !== LF) return this.#fail();
          this.#state = "done";
          return i + 1;
        default:
          return -1;
      }
      i++;
    }
    return -1;
  }

  #fail(): number {
    this.#state = "bad";
    return -1;
  }
}

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  return -1;
}
