import assert from "node:assert/strict";
import { type GrantRow, toGrant } from "./grant_row.ts";

const NOW = Date.parse("2026-06-01T12:00:00.000Z");

const row = (overrides: Partial<GrantRow> = {}): GrantRow => ({
  id: "g_aaaaaaaaaaaaaaaa",
  secret_id: "shop.password",
  agent: "ci-bot",
  purpose: "log in",
  mode: "standing",
  uses: JSON.stringify([{ kind: "fill", allowed_origins: ["http://127.0.0.1:8081"] }]),
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
  redemptions: 2,
  ...overrides,
});

Deno.test("toGrant() reads a row's uses and derives its state", () => {
  const g = toGrant(row(), NOW);
  assert.equal(g.state, "active");
  assert.deepEqual(g.uses, [{ kind: "fill", allowed_origins: ["http://127.0.0.1:8081"] }]);
  assert.equal(g.redemptions, 2);
  assert.equal(toGrant(row({ approved_at: null }), NOW).state, "pending");
});

Deno.test("toGrant() reads a damaged uses column as no uses and an unknown mode as once", () => {
  assert.deepEqual(toGrant(row({ uses: "{not json" }), NOW).uses, []);
  assert.deepEqual(toGrant(row({ uses: '[{"kind":"sing"}]' }), NOW).uses, []);
  assert.equal(toGrant(row({ mode: "forever" }), NOW).mode, "once");
});
