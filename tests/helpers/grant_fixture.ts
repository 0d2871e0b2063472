/**
 * A grant as the stores hand one to the checks, for the unit tests of the pure checks
 * (redemption, capture): approved, live, unused, with every field set; a test overrides what
 * it is about.
 *
 * @module
 */
import type { Grant } from "../../runtime/grants/grant.ts";

/** An active standing fill grant of `ci-bot` for `shop.password`, with `overrides` applied. */
export function grantFixture(overrides: Partial<Grant> = {}): Grant {
  return {
    id: "g_aaaaaaaaaaaaaaaa",
    secret_id: "shop.password",
    agent: "ci-bot",
    purpose: "log in",
    mode: "standing",
    uses: [{ kind: "fill", allowed_origins: ["http://127.0.0.1:8081"] }],
    state: "active",
    expires_at: "2100-01-01T00:00:00.000Z",
    created_at: "2026-01-01T00:00:00.000Z",
    created_by: "cli",
    approved_at: "2026-01-01T00:00:00.000Z",
    approved_by: "cli",
    revoked_at: null,
    revoked_by: null,
    revoke_reason: null,
    session_id: null,
    used_at: null,
    last_redeemed_at: null,
    redemptions: 0,
    ...overrides,
  };
}
