/**
 * A pending approval as the approval queue posts it: a form's POST to a shop, with the exact
 * request the operator would see.
 *
 * @module
 */
import type { Approval } from "../../runtime/store/decision_store.ts";

/** A string as a `RequestView` shows it (nothing to escape). */
function text(value: string) {
  return { text: value, length: [...value].length, flags: [] };
}

/** A fresh pending approval that expires `seconds` from now. */
export function pendingApproval(seconds = 60): Approval {
  const now = Date.now();
  return {
    id: crypto.randomUUID(),
    agent: "ada",
    session: "s-1",
    origin: "https://shop.example.test",
    method: "POST",
    kind: "form",
    request: {
      method: "POST",
      url: text("https://shop.example.test/pay"),
      query: [],
      headers: [],
      content_type: "application/x-www-form-urlencoded",
      encoding: "urlencoded",
      entries: [{ name: text("amount"), value: text("10") }],
      size: 9,
      sha256: "0".repeat(64),
      flags: [],
    },
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + seconds * 1000).toISOString(),
    state: "pending",
  };
}
