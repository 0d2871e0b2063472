/**
 * Newline-ended lines of a byte stream with a cap on each: a line over the cap is discarded
 * as it streams in, never held whole, and reading goes on after its newline. How the runtime
 * reads the egress proxy's messages (`egress_proxy.ts`), one JSON message a line.
 *
 * @module
 */

/** What `readBoundedLines` hands each line to. */
export interface BoundedLinesOptions {
  /** The most characters a line may have; a longer one is dropped. */
  max: number;
  /** Each line that fits, without its newline, in order. */
  onLine(line: string): void;
  /** Told once for each line dropped, when it reaches the cap. */
  onOverlong(): void;
}

/**
 * Reads `stream` (UTF-8) to its end, handing every line that fits to `options.onLine`; text
 * after the last newline is no line and is never handed on. Errors of the stream reject;
 * what the callbacks throw leaves them too, so callers that must read on catch their own.
 */
export async function readBoundedLines(
  stream: ReadableStream<Uint8Array>,
  options: BoundedLinesOptions,
): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = "";
  /** Inside a line over the cap: everything up to its newline is dropped. */
  let skipping = false;
  for await (const chunk of stream) {
    const text = decoder.decode(chunk, { stream: true });
    let from = 0;
    while (from < text.length) {
      const nl = text.indexOf("\n", from);
      const end = nl < 0 ? text.length : nl;
      if (!skipping && buffered.length + (end - from) > options.max) {
        options.onOverlong();
        buffered = "";
        skipping = true;
      }
      if (!skipping) buffered += text.slice(from, end);
      if (nl < 0) break;
      from = nl + 1;
      if (skipping) {
        skipping = false;
        continue;
      }
      const line = buffered;
      buffered = "";
      options.onLine(line);
    }
  }
}
