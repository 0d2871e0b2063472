import assert from "node:assert/strict";
import { GrantError } from "./errors.ts";
import type { Grant } from "./grant.ts";
import { grantFixture } from "../../tests/helpers/grant_fixture.ts";
import {
  CAPTURE_CHECK_ORDER,
  type CaptureCheckRequest,
  captureRefusal,
  judgeCapture,
  judgeCaptureAll,
  targetsOf,
  validateCaptureRequest,
} from "./capture_checks.ts";

const GITHUB = "https://github.com";
const ID = "g_aaaaaaaaaaaaaaaa";

const grant = (overrides: Partial<Grant> = {}): Grant =>
  grantFixture({
    id: ID,
    secret_id: "gh.pem",
    agent: "ci-bot",
    purpose: "register the app",
    mode: "once",
    uses: [{ kind: "capture", allowed_origins: [GITHUB], workflow: "github_app", output: "pem" }],
    ...overrides,
  });

const request = (overrides: Partial<CaptureCheckRequest> = {}): CaptureCheckRequest => ({
  agent: "ci-bot",
  origin: GITHUB,
  workflow: "github_app",
  outputs: [{ output: "pem", grantId: ID }],
  ...overrides,
});
const empty = () => false;
const out = { output: "pem", grantId: ID };

Deno.test("judgeCapture() passes a capture grant that meets every check", () => {
  const g = grant();
  const valid = validateCaptureRequest(request());
  assert.deepEqual(judgeCapture(out, g, valid, empty), {
    output: "pem",
    id: ID,
    grant: g,
    refusal: undefined,
  });
});

Deno.test("judgeCapture() refuses each failed check with its code, in CAPTURE_CHECK_ORDER", () => {
  const valid = validateCaptureRequest(request());
  const code = (
    g: Grant | undefined,
    req = valid,
    occupied: (id: string) => boolean = empty,
    o = out,
  ) => judgeCapture(o, g, req, occupied).refusal;
  assert.equal(code(undefined), "GRANT_NOT_FOUND");
  assert.equal(code(grant(), valid, empty, { output: "pem", grantId: "../x" }), "GRANT_NOT_FOUND");
  assert.equal(code(grant({ agent: "other" })), "GRANT_WRONG_AGENT");
  assert.equal(code(grant(), { ...valid, agent: null }), "GRANT_WRONG_AGENT");
  assert.equal(code(grant({ state: "revoked" })), "GRANT_REVOKED");
  assert.equal(code(grant({ state: "expired" })), "GRANT_EXPIRED");
  assert.equal(code(grant({ state: "pending" })), "GRANT_PENDING");
  assert.equal(code(grant({ state: "used" })), "GRANT_USED");
  // Once-mode semantics whatever the stored mode: a consumed capture grant wrote already.
  assert.equal(
    code(grant({ mode: "standing", used_at: "2026-01-02T00:00:00.000Z" })),
    "GRANT_USED",
  );
  // A fill grant never writes; neither does a capture use without its binding, or a mixed one.
  assert.equal(
    code(grant({ uses: [{ kind: "fill", allowed_origins: [GITHUB] }] })),
    "GRANT_WRONG_USE",
  );
  assert.equal(
    code(grant({ uses: [{ kind: "capture", allowed_origins: [GITHUB] }] })),
    "GRANT_WRONG_USE",
  );
  assert.equal(
    code(grant({
      uses: [
        { kind: "fill", allowed_origins: [GITHUB] },
        { kind: "capture", allowed_origins: [GITHUB], workflow: "github_app", output: "pem" },
      ],
    })),
    "GRANT_WRONG_USE",
  );
  for (
    const origin of [
      "http://github.com",
      "https://github.com:444",
      "https://api.github.com",
      "https://github.com.evil.test",
      "null",
      "",
    ]
  ) {
    assert.equal(
      code(grant(), validateCaptureRequest(request({ origin }))),
      "GRANT_WRONG_ORIGIN",
      origin,
    );
  }
  // The origin is cut from a URL and normalized.
  assert.equal(
    code(grant(), validateCaptureRequest(request({ origin: "HTTPS://GitHub.com:443/x?y#z" }))),
    undefined,
  );
  assert.equal(
    code(grant(), validateCaptureRequest(request({ workflow: "linear_oauth_app" }))),
    "GRANT_WRONG_WORKFLOW",
  );
  assert.equal(
    code(grant(), valid, empty, { output: "client_secret", grantId: ID }),
    "GRANT_WRONG_OUTPUT",
  );
  assert.equal(code(grant(), valid, (id) => id === "gh.pem"), "CAPTURE_TARGET_OCCUPIED");
  // The consumption after the write skips the target check only.
  assert.equal(judgeCapture(out, grant(), valid, () => true, false).refusal, undefined);
  assert.deepEqual(CAPTURE_CHECK_ORDER.slice(-3), [
    "GRANT_WRONG_WORKFLOW",
    "GRANT_WRONG_OUTPUT",
    "CAPTURE_TARGET_OCCUPIED",
  ]);
});

Deno.test("judgeCapture() asks the vault only for a grant that passed every other check", () => {
  const asked: string[] = [];
  const occupied = (id: string) => {
    asked.push(id);
    return false;
  };
  const valid = validateCaptureRequest(request());
  judgeCapture(out, grant({ state: "expired" }), valid, occupied);
  judgeCapture({ output: "key", grantId: ID }, grant(), valid, occupied);
  assert.deepEqual(asked, []);
  judgeCapture(out, grant(), valid, occupied);
  assert.deepEqual(asked, ["gh.pem"]);
});

Deno.test("judgeCaptureAll() refuses two outputs that would write one target", () => {
  const a = grant();
  const b = grant({
    id: "g_bbbbbbbbbbbbbbbb",
    uses: [{
      kind: "capture",
      allowed_origins: [GITHUB],
      workflow: "github_app",
      output: "client_secret",
    }],
  });
  const valid = validateCaptureRequest(request({
    outputs: [{ output: "pem", grantId: a.id }, { output: "client_secret", grantId: b.id }],
  }));
  const grants = new Map([[a.id, a], [b.id, b]]);
  assert.deepEqual(
    judgeCaptureAll(valid, grants, empty).map((v) => v.refusal),
    ["CAPTURE_TARGET_DUPLICATE", "CAPTURE_TARGET_DUPLICATE"],
  );
  const c = { ...b, secret_id: "gh.secret" };
  const passing = judgeCaptureAll(valid, new Map([[a.id, a], [c.id, c]]), empty);
  assert.deepEqual(passing.map((v) => v.refusal), [undefined, undefined]);
  assert.deepEqual(targetsOf(passing), [
    { output: "pem", grantId: a.id, secretId: "gh.pem" },
    { output: "client_secret", grantId: c.id, secretId: "gh.secret" },
  ]);
});

Deno.test("validateCaptureRequest() refuses malformed requests with GRANT_INVALID", () => {
  const invalid = (err: unknown) => err instanceof GrantError && err.code === "GRANT_INVALID";
  for (
    const bad of [
      request({ workflow: "" }),
      request({ workflow: "GitHub" }),
      request({ outputs: [] }),
      request({ outputs: "pem" as unknown as [] }),
      request({ outputs: [{ output: "PEM", grantId: ID }] }),
      request({ outputs: [{ output: "pem" } as unknown as { output: string; grantId: string }] }),
      // No output twice, and one grant per output.
      request({ outputs: [{ output: "pem", grantId: ID }, { output: "pem", grantId: "g_b" }] }),
      request({ outputs: [{ output: "pem", grantId: ID }, { output: "key", grantId: ID }] }),
      null as unknown as CaptureCheckRequest,
    ]
  ) {
    assert.throws(() => validateCaptureRequest(bad), invalid, JSON.stringify(bad));
  }
  const valid = validateCaptureRequest(request({ origin: "not a url", sessionId: "" }));
  assert.equal(valid.origin, undefined);
  assert.equal(valid.sessionId, null);
});

Deno.test("captureRefusal() names the output and the grant, never a value", () => {
  const err = captureRefusal({ output: "pem", id: ID, refusal: "CAPTURE_TARGET_OCCUPIED" });
  assert.ok(err instanceof GrantError);
  assert.equal(err.code, "CAPTURE_TARGET_OCCUPIED");
  assert.equal(
    err.message,
    `output pem: the target secret already holds a value (${ID}); nothing was written`,
  );
  assert.equal(
    captureRefusal({ output: "pem", id: null, refusal: "GRANT_NOT_FOUND" }, "").message,
    "output pem: no such grant",
  );
});
