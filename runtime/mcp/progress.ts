/**
 * Keeps a client waiting: while a tool call runs (an approval can take minutes), a client
 * that sent a progress token gets `notifications/progress` every few seconds, so clients
 * with a 60 s request timeout that reset it on progress keep waiting. The message is the
 * runtime's own (no page text); it is redacted all the same, as whole as it is sent (the
 * server redacts it once more).
 *
 * @module
 */
import { processRedactor, type Redactor } from "../redact/mod.ts";

/** How often a waiting client hears from the runtime. */
export const PROGRESS_EVERY_MS = 5_000;

/** Sends one progress notification; rejections are the transport's (a client gone). */
export type ProgressSender = (params: {
  progressToken: string | number;
  progress: number;
  message: string;
}) => Promise<void>;

/** Runs `work`, sending progress for `token` until it settles (nothing without a token). */
export async function withProgress<T>(
  token: string | number | undefined,
  send: ProgressSender,
  work: () => Promise<T>,
  everyMs: number = PROGRESS_EVERY_MS,
  redactor: Redactor = processRedactor(),
): Promise<T> {
  if (token === undefined) return await work();
  let ticks = 0;
  const timer = setInterval(() => {
    ticks++;
    send({
      progressToken: token,
      progress: ticks,
      message: redactor.redact(`still working (${Math.round((ticks * everyMs) / 1000)} s)`),
    }).catch(() => {});
  }, everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
