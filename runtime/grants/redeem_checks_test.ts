import assert from "node:assert/strict";
import { GrantError } from "./errors.ts";
import type { Grant } from "./grant.ts";
import { grantFixture } from "../../tests/helpers/grant_fixture.ts";
import { closest, judgeGrant, type RedeemRequest, refusal } from "./redeem_checks.ts";

const SHOP = "http://127.0.0.1:8081";

const grant = (overrides: Partial<Grant> = {}): Grant => grantFixture(overrides);

const request: RedeemRequest = { agent: "ci-bot", useKind: "fill", origin: SHOP, sessionId: "s-1" };
const held = () => true;

Deno.test("judgeGrant() passes a grant that meets every check", () => {
  const g = grant();
  assert.deepEqual(judgeGrant(g.id, g, request, SHOP, "fill", held), {
    id: g.id,
    grant: g,
    refusal: undefined,
    secretGone: undefined,
  });
});

Deno.test("judgeGrant() refuses in CHECK_ORDER and marks a secret gone from the vault", () => {
  const code = (g: Grant | undefined, has = held, origin = SHOP, req = request) =>
    judgeGrant(g?.id ?? null, g, req, origin, "fill", has).refusal;
  assert.equal(code(undefined), "GRANT_NOT_FOUND");
  assert.equal(code(grant({ agent: "other" })), "GRANT_WRONG_AGENT");
  assert.equal(code(grant(), held, SHOP, { ...request, agent: null }), "GRANT_WRONG_AGENT");
  assert.equal(code(grant({ state: "revoked" }), () => false), "GRANT_REVOKED");
  const gone = judgeGrant("g_aaaaaaaaaaaaaaaa", grant(), request, SHOP, "fill", () => false);
  assert.deepEqual([gone.refusal, gone.secretGone], ["GRANT_REVOKED", true]);
  assert.equal(code(grant({ state: "expired" })), "GRANT_EXPIRED");
  assert.equal(code(grant({ state: "pending" })), "GRANT_PENDING");
  assert.equal(code(grant({ state: "used" })), "GRANT_USED");
  assert.equal(
    code(grant({ uses: [{ kind: "capture", allowed_origins: [SHOP] }] })),
    "GRANT_WRONG_USE",
  );
  assert.equal(code(grant(), held, "http://127.0.0.2:8081"), "GRANT_WRONG_ORIGIN");
  assert.equal(code(grant({ mode: "session", session_id: "s-0" })), "GRANT_WRONG_SESSION");
  assert.equal(code(grant({ mode: "session", session_id: "s-1" })), undefined);
});

Deno.test("closest() keeps the refusal furthest in CHECK_ORDER, the first such", () => {
  const a = { id: "a", refusal: "GRANT_PENDING" as const };
  const b = { id: "b", refusal: "GRANT_WRONG_ORIGIN" as const };
  const c = { id: "c", refusal: "GRANT_WRONG_ORIGIN" as const };
  assert.deepEqual(closest([a, b, c]), [b]);
  assert.deepEqual(closest([]), []);
});

Deno.test("refusal() is a GrantError naming the grant when there is one", () => {
  const err = refusal("GRANT_USED", "g_aaaaaaaaaaaaaaaa");
  assert.ok(err instanceof GrantError);
  assert.equal(err.code, "GRANT_USED");
  assert.equal(err.message, "the once grant was used already (g_aaaaaaaaaaaaaaaa)");
  assert.equal(refusal("GRANT_NOT_FOUND").message, "no such grant");
});

Deno.test("judgeGrant() refuses a capture grant before its (empty) target is looked at", () => {
  const capture = grant({
    mode: "once",
    uses: [{ kind: "capture", allowed_origins: [SHOP], workflow: "github_app", output: "pem" }],
  });
  let asked = 0;
  const empty = () => {
    asked++;
    return false;
  };
  const v = judgeGrant(capture.id, capture, request, SHOP, "fill", empty);
  assert.deepEqual([v.refusal, v.secretGone, asked], ["GRANT_WRONG_USE", undefined, 0]);
  // The fill path redeems fills only: `capture` is refused for any grant.
  const fill = grant();
  assert.equal(
    judgeGrant(fill.id, fill, { ...request, useKind: "capture" }, SHOP, "capture", held).refusal,
    "GRANT_WRONG_USE",
  );
});
