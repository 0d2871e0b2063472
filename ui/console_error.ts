/**
 * The console's typed HTTP errors: thrown anywhere in a route, turned into a response in one
 * place (`onError` of `createConsoleApp`), as JSON under `/api/` and as a page elsewhere.
 *
 * @module
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** An error with the HTTP status and stable code it is answered with. */
export class ConsoleError extends Error {
  /** The response status. */
  readonly status: ContentfulStatusCode;
  /** Stable UPPER_SNAKE code (`BAD_REQUEST`, `CSRF_REQUIRED`, …). */
  readonly code: string;
  /** Extra response headers (`Retry-After`). */
  readonly headers: Record<string, string>;
  constructor(
    status: ContentfulStatusCode,
    code: string,
    message: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ConsoleError";
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

/** What an error is answered with: status, code and a message fit to show. */
export interface ErrorAnswer {
  status: ContentfulStatusCode;
  code: string;
  message: string;
  headers: Record<string, string>;
}

/**
 * Maps any error to its answer. A port's error with a string `code` is the operator's input
 * refused (400), or a store that cannot be reached (503 for `…_UNAVAILABLE`/`…_UNREADABLE`);
 * its message is written for people and carries no secrets. Anything else is a 500 whose
 * message says nothing.
 */
export function errorAnswer(err: unknown): ErrorAnswer {
  if (err instanceof ConsoleError) {
    return { status: err.status, code: err.code, message: err.message, headers: err.headers };
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (err instanceof Error && typeof code === "string" && /^[A-Z][A-Z0-9_]*$/.test(code)) {
    const status = /_(UNAVAILABLE|UNREADABLE)$/.test(code) ? 503 : 400;
    return { status, code, message: err.message.slice(0, 500), headers: {} };
  }
  return { status: 500, code: "INTERNAL", message: "internal error", headers: {} };
}
