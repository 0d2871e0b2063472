/**
 * "A login writes only its own request" (issue 19, class 4), continued from
 * tests/login_writes_test.ts (the world is tests/helpers/login_writes.ts): the login's own
 * bytes sent twice, a form whose submission cannot be known, a copy deferred after Enter,
 * formactions, login_submit_origins, and reads that carry the password to another allowed
 * origin.
 */
import assert from "node:assert/strict";
import {
  assertOwnSubmission,
  assertRefused,
  assertSignedIn,
  PASSWORD,
  paths,
  READ_ONLY_NAMED,
  type World,
  world,
} from "./helpers/login_writes.ts";

/**
 * The `read_only` world of the first two tests (one runtime for both): every attempt is a
 * fresh session, and says only what its own session and the site saw during it. The second
 * test ends it.
 */
let readOnlyWorld: Promise<World> | undefined;
const readOnly = () => readOnlyWorld ??= world(READ_ONLY_NAMED);

Deno.test({
  name:
    "read_only: the login's own bytes sent twice, a submission it cannot know, a deferred copy and formactions",
  // The runtime outlives this test: the next one ends it.
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const w = await readOnly();
  const { site } = w;

  await t.step("9a. the same bytes twice: the navigation and a fetch copy", async () => {
    const a = await w.attempt({ attack: "double-fetch" });
    assertRefused(a);
    assert.deepEqual(paths(a), ["POST /login"]);
    assertOwnSubmission(a.writes[0]);
  });

  await t.step("9b. the same bytes twice: the navigation and a frame copy", async () => {
    const a = await w.attempt({ attack: "double-frame" });
    assertRefused(a);
    assert.deepEqual(paths(a), ["POST /login"]);
    assertOwnSubmission(a.writes[0]);
  });

  await t.step("9c. the site's answer posts the same fields again at once", async () => {
    const a = await w.attempt({ attack: "resubmit" });
    assert.deepEqual(paths(a), ["POST /login"], "the second POST never reached the site");
    assertOwnSubmission(a.writes[0]);
    assertRefused(a);
  });

  for (const form of ["custom-element", "file"] as const) {
    await t.step(
      `9d. a form whose submission cannot be known (${form}) writes nothing`,
      async () => {
        const a = await w.attempt({ form });
        assertRefused(a);
        assert.deepEqual(paths(a), []);
      },
    );
  }

  await t.step("9d. ... nor when its submission is sent 1 s after Enter", async () => {
    // The hold waits for the submission it cannot know as for one it can: once it closed
    // after the settle's grace, and a late submission (a busy machine) went out.
    const a = await w.attempt({ form: "custom-element", attack: "late" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("9d'. a write deferred after Enter is still the hold's, and refused", async () => {
    // The page cancels, hides its fields and posts a tampered copy 1.5 s later. The login
    // waits for its form's submission (a busy machine may be slow to send it), so the hold
    // is still open and refuses the copy; later still, read_only would.
    const a = await w.attempt({ attack: "deferred", settleMs: 3_000 });
    assertRefused(a);
    assert.deepEqual(paths(a), [], "nothing reached /steal");
    const late = a.rows.filter((r) =>
      r.kind === "request" && r.method === "POST" && r.origin === site.origin
    );
    assert.deepEqual(late.map((r) => `${r.source} ${r.decision} ${r.reason}`), [
      "proxy deny LOGIN_WRITE_MISMATCH",
    ]);
  });

  await t.step("9e. the default button's formaction (same origin) is the form's own", async () => {
    const a = await w.attempt({ form: "formaction-path" });
    assertSignedIn(a, "/login-alt");
    assert.deepEqual(site.signIns.map((s) => s.path), ["/login-alt"]);
  });

  await t.step("9f. the default button's formaction on another origin", async () => {
    const a = await w.attempt({ form: "formaction-origin" });
    assert.equal(a.isError, true);
    assert.match(a.text, /FILL_TARGET_REJECTED/);
    assert.deepEqual(paths(a), []);
    assert.equal(site.requestsCarrying(PASSWORD).length, 0);
  });
});

// Beyond class 4: a login page's script carrying the typed password to another allowed
// origin by a read (a GET navigation of the login form itself, an image) is refused by the
// egress check of guarded credentials (SECRET_IN_REQUEST), whoever sends it and when.
Deno.test({
  name:
    "browser_login: reads carrying the password to another allowed origin are refused (SECRET_IN_REQUEST)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    await using w = await readOnly();
    for (const attack of ["get-other", "image-other"] as const) {
      await t.step(attack, async () => {
        const a = await w.attempt({ attack });
        const there = w.site.requestsCarrying(PASSWORD).filter((r) =>
          r.origin === w.site.otherOrigin
        );
        assert.deepEqual(there.map((r) => `${r.method} ${r.path}`), []);
        // Refused by the login's hold while it is open, by the credential check after.
        assert.ok(
          a.rows.some((r) =>
            r.decision === "deny" &&
            (r.reason === "SECRET_IN_REQUEST" || r.reason === "LOGIN_WRITE_MISMATCH")
          ),
          "the refusal is audited",
        );
      });
    }
  },
});

Deno.test("read_only: a login to an origin login_submit_origins does not name submits nothing", async (t) => {
  // Only the other origin is named; the grants are for 127.0.0.1.
  await using w = await world((site) =>
    `read_only: true\nlogin_submit_origins: [${site.otherOrigin}]\n`
  );
  await t.step("8. the plain form: LOGIN_ORIGIN_NOT_NAMED", async () => {
    const a = await w.attempt({});
    assertRefused(a, "LOGIN_ORIGIN_NOT_NAMED");
    assert.deepEqual(paths(a), []);
    assert.equal(w.site.signIns.length, 0);
  });
  await t.step(
    "8b. a same-origin formaction is checked against the named origins too",
    async () => {
      const a = await w.attempt({ form: "formaction-path" });
      assertRefused(a, "LOGIN_ORIGIN_NOT_NAMED");
      assert.deepEqual(paths(a), []);
    },
  );
});
