import assert from "node:assert/strict";
import { grantState } from "../grants/grant.ts";
import { type GrantRow, toGrantRecord } from "./grant_row.ts";

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

Deno.test("toGrantRecord() reads a row's uses; its state derives from the record", () => {
  const g = toGrantRecord(row());
  assert.equal(grantState(g, NOW), "active");
  assert.deepEqual(g.uses, [{ kind: "fill", allowed_origins: ["http://127.0.0.1:8081"] }]);
  assert.equal(g.redemptions, 2);
  assert.equal(grantState(toGrantRecord(row({ approved_at: null })), NOW), "pending");
});

Deno.test("toGrantRecord() reads a damaged uses column as no uses and an unknown mode as once", () => {
  assert.deepEqual(toGrantRecord(row({ uses: "{not json" })).uses, []);
  assert.deepEqual(toGrantRecord(row({ uses: '[{"kind":"sing"}]' })).uses, []);
  assert.equal(toGrantRecord(row({ mode: "forever" })).mode, "once");
});
