import assert from "node:assert/strict";
import { GrantError } from "./errors.ts";
import {
  captureUseOf,
  DEFAULT_EXPIRY_MS,
  GRANT_ID_RE,
  grantOrigin,
  grantState,
  type GrantStateFields,
  isCaptureGrant,
  newGrantId,
  parseExpiry,
  parseGrantInput,
} from "./grant.ts";

const NOW = Date.parse("2026-06-01T12:00:00.000Z");
const code = (c: string) => (err: unknown) => err instanceof GrantError && err.code === c;

function input(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    secret_id: "shop.password",
    agent: "ci-bot",
    purpose: "log in to the shop",
    mode: "once",
    uses: [{ kind: "fill", allowed_origins: ["https://shop.test"] }],
    ...overrides,
  };
}

Deno.test("newGrantId() is g_ and 16 base32 characters, different every time", () => {
  const ids = new Set(Array.from({ length: 200 }, () => newGrantId()));
  assert.equal(ids.size, 200);
  for (const id of ids) {
    assert.match(id, /^g_[a-z2-7]{16}$/);
    assert.ok(GRANT_ID_RE.test(id));
  }
});

Deno.test("grantOrigin() normalizes an exact origin and refuses paths, queries, credentials and non-http", () => {
  assert.equal(grantOrigin("HTTPS://Shop.TEST:443"), "https://shop.test");
  assert.equal(grantOrigin("http://127.0.0.1:8081/"), "http://127.0.0.1:8081");
  assert.equal(grantOrigin("  http://[::1]:9000  "), "http://[::1]:9000");
  for (
    const bad of [
      "https://shop.test/login",
      "https://shop.test/?",
      "https://shop.test?x=1",
      "https://shop.test#",
      "https://user:pw@shop.test",
      "https://@shop.test",
      "https://shop.test//",
      "https://sh\nop.test",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "*.shop.test",
      "shop.test",
      "",
    ]
  ) {
    assert.throws(() => grantOrigin(bad), code("GRANT_INVALID"), JSON.stringify(bad));
  }
});

Deno.test("parseExpiry() takes durations and zoned ISO times, defaults to a day, refuses past and far", () => {
  assert.equal(parseExpiry(undefined, NOW), new Date(NOW + DEFAULT_EXPIRY_MS).toISOString());
  assert.equal(parseExpiry("", NOW), "2026-06-02T12:00:00.000Z");
  assert.equal(parseExpiry("30m", NOW), "2026-06-01T12:30:00.000Z");
  assert.equal(parseExpiry("24h", NOW), "2026-06-02T12:00:00.000Z");
  assert.equal(parseExpiry("7d", NOW), "2026-06-08T12:00:00.000Z");
  assert.equal(parseExpiry("2026-07-01T00:00:00Z", NOW), "2026-07-01T00:00:00.000Z");
  assert.equal(parseExpiry("2026-07-01T02:00+02:00", NOW), "2026-07-01T00:00:00.000Z");
  for (const bad of ["0m", "2026-05-01T00:00:00Z", "366d", "2026-07-01T00:00:00", "soon", "1w"]) {
    assert.throws(() => parseExpiry(bad, NOW), code("GRANT_INVALID"), bad);
  }
});

Deno.test("parseGrantInput() accepts a full grant, dedupes origins and resolves the expiry", () => {
  const g = parseGrantInput(
    input({
      mode: "session",
      expires: "2h",
      uses: [{ kind: "fill", allowed_origins: ["https://Shop.test", "https://shop.test:443/"] }],
    }),
    NOW,
  );
  assert.deepEqual(g, {
    secret_id: "shop.password",
    agent: "ci-bot",
    purpose: "log in to the shop",
    mode: "session",
    uses: [{ kind: "fill", allowed_origins: ["https://shop.test"] }],
    expires_at: "2026-06-01T14:00:00.000Z",
  });
});

Deno.test("parseGrantInput() accepts a capture grant: one capture use binding origins, workflow and output", () => {
  const g = parseGrantInput(
    input({
      secret_id: "gh.app-pem",
      mode: "once",
      uses: [{
        kind: "capture",
        allowed_origins: ["https://GitHub.com/", "https://github.com"],
        workflow: "github_app",
        output: "pem",
      }],
    }),
    NOW,
  );
  assert.deepEqual(g.uses, [{
    kind: "capture",
    allowed_origins: ["https://github.com"],
    workflow: "github_app",
    output: "pem",
  }]);
  assert.deepEqual(captureUseOf({ uses: g.uses }), g.uses[0]);
  assert.ok(isCaptureGrant(g));
  assert.equal(captureUseOf({ uses: [{ kind: "fill", allowed_origins: [] }] }), undefined);
  // A stored capture use without its binding captures nothing.
  assert.equal(captureUseOf({ uses: [{ kind: "capture", allowed_origins: [] }] }), undefined);
});

Deno.test("parseGrantInput() refuses capture grants that are not one bound capture use, once", () => {
  const capture = {
    kind: "capture",
    allowed_origins: ["https://github.com"],
    workflow: "github_app",
    output: "pem",
  };
  const fill = { kind: "fill", allowed_origins: ["https://github.com"] };
  const cases: [Record<string, unknown>, RegExp][] = [
    // One grant per output, and a capture grant never fills.
    [input({ mode: "once", uses: [fill, capture] }), /exactly one use/],
    [input({ mode: "once", uses: [capture, capture] }), /once/],
    // Once-mode semantics.
    [input({ mode: "standing", uses: [capture] }), /mode is once/],
    [input({ mode: "session", uses: [capture] }), /mode is once/],
    // The binding is required and well-formed; a fill use carries none.
    [input({ mode: "once", uses: [{ ...capture, workflow: undefined }] }), /uses\.0/],
    [input({ mode: "once", uses: [{ ...capture, output: undefined }] }), /uses\.0/],
    [input({ mode: "once", uses: [{ ...capture, output: "PEM" }] }), /uses\.0/],
    [input({ mode: "once", uses: [{ ...capture, workflow: "github app" }] }), /uses\.0/],
    [input({ mode: "once", uses: [{ ...capture, output: ["pem", "client_secret"] }] }), /uses/],
    [input({ mode: "once", uses: [{ ...fill, workflow: "github_app" }] }), /uses\.0/],
    [input({ mode: "once", uses: [{ ...fill, output: "pem" }] }), /uses\.0/],
    [input({ mode: "once", uses: [{ ...capture, extra: 1 }] }), /uses\.0/],
  ];
  for (const [bad, field] of cases) {
    assert.throws(
      () => parseGrantInput(bad, NOW),
      (err: unknown) => code("GRANT_INVALID")(err) && field.test((err as Error).message),
      JSON.stringify(bad),
    );
  }
});

Deno.test("parseGrantInput() refuses bad shapes with GRANT_INVALID naming the field", () => {
  const cases: [Record<string, unknown> | unknown, RegExp][] = [
    [input({ mode: "forever" }), /mode/],
    [input({ agent: "Bad Agent" }), /agent/],
    [input({ secret_id: "../etc" }), /secret_id/],
    [input({ purpose: "   " }), /purpose/],
    [input({ purpose: "x".repeat(201) }), /purpose/],
    [input({ purpose: "bidi \u202e txt" }), /purpose/],
    [input({ purpose: "line\nbreak" }), /purpose/],
    [input({ uses: [] }), /uses/],
    [input({ uses: [{ kind: "read", allowed_origins: ["https://a.test"] }] }), /uses\.0\.kind/],
    [input({ uses: [{ kind: "fill", allowed_origins: [] }] }), /uses\.0\.allowed_origins/],
    [input({ extra: 1 }), /grant|extra/],
    [null, /grant/],
    ["a string", /grant/],
  ];
  for (const [value, field] of cases) {
    assert.throws(
      () => parseGrantInput(value, NOW),
      (err: unknown) => code("GRANT_INVALID")(err) && field.test((err as Error).message),
      JSON.stringify(value),
    );
  }
  assert.throws(
    () =>
      parseGrantInput(
        input({
          uses: [
            { kind: "fill", allowed_origins: ["https://a.test"] },
            { kind: "fill", allowed_origins: ["https://b.test"] },
          ],
        }),
        NOW,
      ),
    /each use kind/,
  );
  assert.throws(
    () =>
      parseGrantInput(
        input({ uses: [{ kind: "fill", allowed_origins: ["https://a.test/x"] }] }),
        NOW,
      ),
    /not an http\(s\) origin/,
  );
});

Deno.test("grantState() orders revoked, expired, pending, used, active", () => {
  const base: GrantStateFields = {
    mode: "once",
    expires_at: "2026-06-02T00:00:00.000Z",
    approved_at: "2026-06-01T00:00:00.000Z",
    revoked_at: null,
    used_at: null,
  };
  assert.equal(grantState(base, NOW), "active");
  assert.equal(grantState({ ...base, used_at: "2026-06-01T01:00:00.000Z" }, NOW), "used");
  assert.equal(
    grantState({ ...base, mode: "standing", used_at: "2026-06-01T01:00:00.000Z" }, NOW),
    "active",
  );
  assert.equal(grantState({ ...base, approved_at: null }, NOW), "pending");
  assert.equal(
    grantState({ ...base, approved_at: null, expires_at: "2026-06-01T00:00:00Z" }, NOW),
    "expired",
  );
  assert.equal(grantState({ ...base, expires_at: "not a time" }, NOW), "expired");
  assert.equal(grantState({ ...base, expires_at: new Date(NOW).toISOString() }, NOW), "expired");
  assert.equal(grantState({ ...base, revoked_at: "2026-06-01T02:00:00.000Z" }, NOW), "revoked");
});
