/**
 * "A login writes only its own request" (issue 19, class 4), end to end with real Chromium
 * through the real runtime: a login page whose script swaps the action, edits the entry
 * list, replays the submission by script or into a frame, or sends a copy beside it gets
 * nothing out under `read_only`, with no human asked; the plain form signs in. Every case
 * says what the site received (bodies by path) and checks that no tool result holds the
 * password (tests/helpers/login_writes.ts). The login's own bytes sent twice, submissions it
 * cannot know, formactions and reads carrying the password are in
 * tests/login_writes_hold_test.ts, which runs beside this file.
 *
 * Each test's attempts share one agent session (one browser): what a case proves is what one
 * page script gets out of one login, not isolation between sessions. Each attempt counts only
 * its own audit rows and what the site received after the last page was left, and each test
 * ends with the plain login signing in again in that session, so a session left refusing
 * every write cannot pass an attack's case.
 */
import assert from "node:assert/strict";
import {
  assertOwnSubmission,
  assertRefused,
  assertSignedIn,
  paths,
  READ_ONLY_NAMED,
  world,
} from "./helpers/login_writes.ts";

Deno.test("read_only: a login page's script gets no write out beside or instead of the login's own", async (t) => {
  await using w = await world(READ_ONLY_NAMED, { sharedSession: true });
  const { site } = w;

  await t.step("control: the plain form signs in with exactly its own POST", async () => {
    const a = await w.attempt({});
    assertSignedIn(a);
    assert.deepEqual(site.signIns.map((s) => s.path), ["/login"]);
  });

  await t.step("1. submit listener swaps the action to /steal", async () => {
    const a = await w.attempt({ attack: "action-steal" });
    assertRefused(a);
    assert.deepEqual(paths(a), [], "nothing reached /steal nor /login");
  });

  await t.step("2. formdata listener appends a copy of the password", async () => {
    const a = await w.attempt({ attack: "formdata-append" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("3. formdata listener changes the username", async () => {
    const a = await w.attempt({ attack: "formdata-user" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("4. submit cancelled, same bytes sent by fetch", async () => {
    const a = await w.attempt({ attack: "fetch-replay" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("5. submit cancelled, a copy posted into a hidden frame", async () => {
    const a = await w.attempt({ attack: "iframe-copy" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("5b. the form's own submission retargeted into a hidden frame", async () => {
    const a = await w.attempt({ attack: "target-frame" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  await t.step("6. the password appended to the action's query at submit", async () => {
    const a = await w.attempt({ attack: "query" });
    assertRefused(a);
    assert.deepEqual(paths(a), []);
  });

  for (const attack of ["beacon", "fetch-other", "beacon-stall"] as const) {
    await t.step(`7. a ${attack} with the password beside the exact submission`, async () => {
      const a = await w.attempt({ attack });
      // The copy is refused; the login's own exact submission still goes (the hold admits
      // it whatever came first), and the login reports the refusal.
      assertRefused(a);
      assert.deepEqual(paths(a), ["POST /login"], "nothing reached /beacon or /other");
      assertOwnSubmission(a.writes[0]);
    });
  }

  await t.step("control after every attack: the plain form still signs in", async () => {
    const a = await w.attempt({});
    assertSignedIn(a);
    assert.deepEqual(site.signIns.map((s) => s.path), ["/login"]);
  });
});

Deno.test("writes allowed: the login's hold is strict all the same", async (t) => {
  await using w = await world(() => `read_only: false\n`, { sharedSession: true });
  await t.step("control: the plain form signs in", async () => {
    assertSignedIn(await w.attempt({}));
  });
  for (const attack of ["action-steal", "formdata-append", "fetch-replay"] as const) {
    await t.step(`${attack}: refused though the policy allows writes`, async () => {
      const a = await w.attempt({ attack });
      assertRefused(a);
      assert.deepEqual(paths(a), []);
    });
  }
  await t.step("beacon: refused, the exact submission goes", async () => {
    const a = await w.attempt({ attack: "beacon" });
    assertRefused(a);
    assert.deepEqual(paths(a), ["POST /login"]);
  });
  await t.step("control after every attack: the plain form still signs in", async () => {
    assertSignedIn(await w.attempt({}));
  });
});
