/**
 * A pending approval as the approval queue posts it: a form's POST to a shop, with the exact
 * request the operator would see.
 *
 * @module
 */
import type { Approval } from "../../runtime/approvals/approval_queue.ts";

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
      url: "https://shop.example.test/pay",
      origin: "https://shop.example.test",
      query: [],
      body: { kind: "form", entries: [{ name: "amount", value: "10" }] },
      headers: [],
      flags: [],
    } as unknown as Approval["request"],
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + seconds * 1000).toISOString(),
    state: "pending",
  };
}
