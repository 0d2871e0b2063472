/**
 * Reading request bodies: JSON for the API, form fields for the pages (the CSRF field is
 * the auth layer's, not the route's, so it is dropped here).
 *
 * @module
 */
import type { Context } from "hono";
import { ConsoleError } from "./console_error.ts";

/** The JSON body, or a 400. */
export async function jsonBody(c: Context): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    throw new ConsoleError(400, "BAD_REQUEST", "the body is not JSON");
  }
}

/** The form's text fields (files and the `csrf` field left out); empty ones dropped. */
export async function formBody(c: Context): Promise<Record<string, string>> {
  const body = await c.req.parseBody().catch(() => {
    throw new ConsoleError(400, "BAD_REQUEST", "the body is not a form");
  });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (name !== "csrf" && typeof value === "string" && value !== "") out[name] = value;
  }
  return out;
}
