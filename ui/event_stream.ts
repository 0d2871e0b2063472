/**
 * `GET /api/events`: a Server-Sent Events stream of approval and question changes for the
 * console's live view. It starts with a `ready` event (the client then catches up), sends a
 * `heartbeat` every so often so proxies and the browser keep it open, and ends when the
 * client leaves, when its session ends, or when it stops reading.
 *
 * @module
 */
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { ConsoleDeps } from "./console_deps.ts";

/** Events queued for a client that does not read before it is dropped. */
const MAX_QUEUED = 200;

/** The stream response; `alive` is asked at each heartbeat whether the session still is. */
export function eventStream(
  c: Context,
  deps: Pick<ConsoleDeps, "approvals" | "questions" | "heartbeatMs">,
  alive: () => boolean | Promise<boolean>,
): Response {
  return streamSSE(c, async (stream) => {
    let finish!: () => void;
    const ended = new Promise<void>((resolve) => finish = resolve);
    stream.onAbort(finish);
    let queued = 0;
    let chain = Promise.resolve();
    const send = (event: string, data: unknown) => {
      if (++queued > MAX_QUEUED) {
        // A client that stopped reading: cut it off rather than queue without end.
        stream.abort();
        return finish();
      }
      chain = chain.then(() => stream.writeSSE({ event, data: JSON.stringify(data) }))
        .catch(() => finish())
        .finally(() => queued--);
    };
    const offApprovals = deps.approvals.subscribe((e) => send("approval", e));
    const offQuestions = deps.questions.subscribe((e) => send("question", e));
    const beat = setInterval(() => {
      // A store that cannot tell ends the stream: the client reconnects and logs in again.
      Promise.resolve().then(alive).catch(() => false)
        .then((ok) => ok ? send("heartbeat", {}) : finish());
    }, deps.heartbeatMs ?? 15_000);
    try {
      send("ready", {});
      await ended;
    } finally {
      clearInterval(beat);
      offApprovals();
      offQuestions();
    }
  });
}
