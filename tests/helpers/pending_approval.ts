/**
 * A held action waiting for an operator, for the tests of the approval queue and of the
 * console that shows it: one builder, so both read the same approval.
 *
 * @module
 */
import type { ApprovalDetails, PendingApproval } from "../../runtime/gate/approver.ts";
import { requestView } from "../../runtime/net/request_view.ts";
import { baseFacts, FRESH_SESSION } from "../../runtime/policy/fact_builders.ts";

/** The details of a held form post of `body` (urlencoded) to `url`, through `redact`. */
export function formDetails(
  url: string,
  body: string,
  redact: (s: string) => string = (s) => s,
): ApprovalDetails {
  const request = requestView({
    method: "POST",
    url,
    contentType: "application/x-www-form-urlencoded",
    body: new TextEncoder().encode(body),
  }, redact);
  return { origin: new URL(url).origin, kind: "form", request };
}

/**
 * A click by `alice` in session `s-1` that posts a form to `https://bank.test/transfer`,
 * waiting up to a minute; `overrides` replace any field.
 */
export function pending(overrides: Partial<PendingApproval> = {}): PendingApproval {
  return {
    session: "s-1",
    agent: "alice",
    tool: "browser_click",
    facts: baseFacts("click", FRESH_SESSION),
    details: formDetails("https://bank.test/transfer?to=acct-9", "amount=100"),
    timeoutMs: 60_000,
    ...overrides,
  };
}
