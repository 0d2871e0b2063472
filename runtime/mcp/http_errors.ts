/**
 * Where the MCP HTTP app's errors become responses, in one place (Hono's `onError`): routes
 * and middleware throw typed errors and never build an error response themselves. What a
 * client reads is an HTTP exception's own answer or a coded error's code and message (coded
 * messages never carry page data or secrets); anything else is "internal error", its name
 * logged.
 *
 * @module
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { log, OmotaiError } from "../mod.ts";
import { CapacityError } from "./session_places.ts";

/** Seconds a client refused for capacity is told to wait (`Retry-After`). */
export const RETRY_AFTER_S = 10;

/**
 * The app's `onError`: an `HTTPException` answers as it says; a session refused for
 * capacity (`CapacityError`) 503 with `Retry-After`, so a load balancer sends the client to
 * another runtime; a session the runtime refuses to open (its policy's world, its required
 * isolation: any other `OmotaiError`) 503 with its code; anything else 500.
 */
export function httpErrorHandler(err: Error, c: Context): Response {
  if (err instanceof HTTPException) return err.res ?? c.text(err.message, err.status);
  if (err instanceof OmotaiError) {
    log(`http: session refused: ${err.code}`);
    const retry = err instanceof CapacityError
      ? { "Retry-After": String(RETRY_AFTER_S) }
      : undefined;
    return c.text(`${err.code}: ${err.message}`, 503, retry);
  }
  log(`http error: ${err.name}`);
  return c.text("internal error", 500);
}

/**
 * A JSON-RPC error answer to throw (as the MCP SDK's transport writes its own): `status`,
 * body `{"jsonrpc": "2.0", "error": {code, message}, "id": null}`.
 */
export function jsonRpcError(
  status: 400 | 404 | 413,
  code: number,
  message: string,
): HTTPException {
  return new HTTPException(status, {
    res: Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status }),
  });
}
