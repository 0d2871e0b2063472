/**
 * `GET /api/audit/export`: every audit row with its hashes, oldest first, one JSON object a
 * line: the same shape as the `--audit` JSONL mirror, so `omotai audit verify --jsonl`
 * checks a download. Streamed, so a long log is never held in memory.
 *
 * @module
 */
import type { AuditPort } from "./ports.ts";

/** The export response. */
export function auditExport(audit: AuditPort): Response {
  const source = audit.export();
  const rows: Iterator<unknown> | AsyncIterator<unknown> = Symbol.asyncIterator in source
    ? (source as AsyncIterable<unknown>)[Symbol.asyncIterator]()
    : (source as Iterable<unknown>)[Symbol.iterator]();
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A few hundred rows a chunk: fewer, larger writes than one row each.
      let chunk = "";
      for (let i = 0; i < 500; i++) {
        const next = await rows.next();
        if (next.done) {
          if (chunk) controller.enqueue(encoder.encode(chunk));
          controller.close();
          return;
        }
        chunk += JSON.stringify(next.value) + "\n";
      }
      controller.enqueue(encoder.encode(chunk));
    },
    async cancel() {
      await rows.return?.();
    },
  });
  return new Response(body, {
    headers: {
      "Content-Type": "application/x-ndjson; charset=utf-8",
      "Content-Disposition": 'attachment; filename="omotai-audit.jsonl"',
    },
  });
}
