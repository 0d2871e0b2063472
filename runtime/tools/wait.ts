/**
 * browser_wait_for.
 *
 * @module
 */
import { z } from "zod";
import { InvalidArgumentsError, OmotaiError } from "../mod.ts";
import { pageFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";

/** Longest wait a single call may ask for. */
export const MAX_WAIT_SECONDS = 30;
const POLL_MS = 250;

export const waitForTool = defineTool({
  name: "browser_wait_for",
  title: "Wait",
  description:
    `Wait until text appears, until text disappears, or for a number of seconds (at most ${MAX_WAIT_SECONDS}). Returns the page snapshot.`,
  schema: z.strictObject({
    text: z.string().min(1).max(1_000).optional().describe("Text to wait for"),
    textGone: z.string().min(1).max(1_000).optional().describe("Text to wait to disappear"),
    time: z.number().min(0).max(MAX_WAIT_SECONDS).optional().describe("Seconds to wait"),
  }),
  kind: "wait",
  readOnly: true,
  destructive: false,
  facts: (ctx) => pageFacts(ctx, "wait"),
  async handle(ctx, { text, textGone, time }) {
    if (text === undefined && textGone === undefined && time === undefined) {
      throw new InvalidArgumentsError("browser_wait_for needs text, textGone or time");
    }
    ctx.response.includeSnapshot();
    // A cancelled call stops waiting at once: it holds the session while it waits.
    if (time !== undefined) await sleep(time * 1000, ctx.signal);
    const deadline = Date.now() + MAX_WAIT_SECONDS * 1000;
    const norm = (s: string) => s.replace(/\s+/g, " ");
    for (;;) {
      if (text === undefined && textGone === undefined) break;
      const page = norm(await ctx.session.outlineText());
      const appeared = text === undefined || page.includes(norm(text));
      const gone = textGone === undefined || !page.includes(norm(textGone));
      if (appeared && gone) break;
      if (Date.now() > deadline) {
        throw new OmotaiError(
          "WAIT_TIMEOUT",
          `the condition did not hold within ${MAX_WAIT_SECONDS} s`,
        );
      }
      await sleep(POLL_MS, ctx.signal);
    }
    const parts = [
      time !== undefined ? `waited ${time} s` : "",
      text !== undefined ? "the text appeared" : "",
      textGone !== undefined ? "the text is gone" : "",
    ].filter(Boolean);
    ctx.response.result(parts.join("; "));
  },
});

/** Sleeps `ms`, or throws `CANCELLED` as soon as `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = () => new OmotaiError("CANCELLED", "the call was cancelled");
    if (signal?.aborted) return reject(cancelled());
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
