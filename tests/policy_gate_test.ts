import assert from "node:assert/strict";
import { type Harness, refOf, startHarness, type TestClient } from "./helpers/harness.ts";

const strict = (site: { origin: string }) =>
  `allowed_origins: [${site.origin}]\n` +
  `denied_paths:\n  - origin: "*"\n    path_prefix: /admin\n` +
  `read_only: true\n`;

/**
 * Starts a case on the session its test shares: in a new tab (the page an earlier case left
 * is closed, and the case's first view is whole, never folded against that page's), with no
 * posts recorded yet.
 */
async function fresh(h: Harness, c: TestClient): Promise<void> {
  if (c.outputs.length > 0) {
    const closed = await c.call("browser_close");
    assert.equal(closed.isError, false, closed.text);
  }
  h.site.posts.clear();
}

Deno.test("the policy gate under a strict policy (one origin, /admin denied, read-only), over one session", async (t) => {
  await using h = await startHarness(strict);
  await using c = await h.connect();
  await t.step(
    "the policy gate denies navigation to other origins and schemes, with a stable line",
    async () => {
      await fresh(h, c);
      const ok = await c.call("browser_navigate", { url: `${h.site.origin}/` });
      assert.equal(ok.isError, false, ok.text);
      const cases: [string, RegExp][] = [
        [
          "http://127.0.0.3:9/steal",
          /^denied: ORIGIN_NOT_ALLOWED \(http:\/\/127\.0\.0\.3:9 is not an allowed origin\)$/,
        ],
        [
          "javascript:alert(1)",
          /^denied: SCHEME_NOT_ALLOWED \(javascript: URLs are not allowed\)$/,
        ],
        ["file:///etc/passwd", /^denied: SCHEME_NOT_ALLOWED/],
        ["data:text/html,<b>x</b>", /^denied: SCHEME_NOT_ALLOWED/],
        ["chrome://settings", /^denied: SCHEME_NOT_ALLOWED/],
        [
          `${h.site.origin}/Admin/%2e%2e/admin//x`,
          /^denied: PATH_DENIED \(http:\/\/127\.0\.0\.1:\d+\/admin\/x\)$/,
        ],
      ];
      for (const [url, expected] of cases) {
        const r = await c.call("browser_navigate", { url });
        assert.equal(r.isError, true, url);
        assert.match(r.text, expected, `${url}: ${r.text}`);
      }
      // The runtime keeps going after denials.
      const snap = await c.call("browser_snapshot");
      assert.match(snap.text, /# Fixture home/);
    },
  );
  await t.step(
    "the policy gate denies foreign links, foreign forms and read-only submits",
    async () => {
      await fresh(h, c);
      const home = await c.call("browser_navigate", { url: `${h.site.origin}/` });
      const away = await c.call("browser_click", { ref: refOf(home.text, /"Away link" ->/) });
      assert.match(
        away.text,
        /^denied: LINK_ORIGIN_NOT_ALLOWED \(link to http:\/\/127\.0\.0\.3:9\)/,
      );
      const admin = await c.call("browser_click", { ref: refOf(home.text, /"Admin link" ->/) });
      assert.match(admin.text, /^denied: PATH_DENIED/);
      const foreign = await c.call("browser_type", {
        ref: refOf(home.text, /textbox "Foreign"/),
        text: "x",
      });
      assert.match(
        foreign.text,
        /^denied: FORM_DESTINATION_NOT_ALLOWED \(GET form to http:\/\/127\.0\.0\.3:9\/collect\)/,
      );
      const signIn = await c.call("browser_click", { ref: refOf(home.text, /button "Sign in"/) });
      assert.match(
        signIn.text,
        /^denied: READ_ONLY_SUBMIT \(POST form to http:\/\/127\.0\.0\.1:\d+\/login\)$/,
      );
      assert.equal(h.site.posts.get("/login"), undefined, "nothing was posted");
      // Reading and GET forms still work.
      const search = await c.call("browser_type", {
        ref: refOf(home.text, /textbox "Query"/),
        text: "ok",
        submit: true,
      });
      assert.equal(search.isError, false, search.text);
      assert.match(search.text, /You searched for: ok/);
    },
  );
  await t.step("pressing Enter in a POST form field is judged as submitting it", async () => {
    await fresh(h, c);
    const home = await c.call("browser_navigate", { url: `${h.site.origin}/` });
    const typed = await c.call("browser_type", {
      ref: refOf(home.text, /textbox "User"/),
      text: "bob",
    });
    assert.equal(typed.isError, false, typed.text);
    const enter = await c.call("browser_press_key", { key: "Enter" });
    assert.match(
      enter.text,
      /^denied: READ_ONLY_SUBMIT \(POST form to http:\/\/127\.0\.0\.1:\d+\/login\)$/,
    );
    assert.equal(h.site.posts.get("/login"), undefined, "nothing was posted");
    // Enter in the GET search field still submits.
    await c.call("browser_type", { ref: refOf(home.text, /textbox "Query"/), text: "fine" });
    const search = await c.call("browser_press_key", { key: "Enter" });
    assert.match(search.text, /You searched for: fine/);
  });
});

Deno.test("confirm_writes: a read-only submit waits for the operator; unanswered it is CONFIRM_TIMEOUT", async () => {
  await using h = await startHarness((site) =>
    `allowed_origins: [${site.origin}]\nconfirm_writes: true\nconfirm_timeout_seconds: 1\n`
  );
  await using c = await h.connect();
  const home = await c.call("browser_navigate", { url: `${h.site.origin}/` });
  const t0 = performance.now();
  const r = await c.call("browser_click", { ref: refOf(home.text, /button "Sign in"/) });
  assert.match(r.text, /^denied: CONFIRM_TIMEOUT \(POST form to /);
  assert.ok(performance.now() - t0 >= 900, "it waited for the operator");
  assert.equal(h.site.posts.get("/login"), undefined);
});

Deno.test("max_actions and max_seconds limit a session", async () => {
  await using h = await startHarness((site) =>
    `allowed_origins: [${site.origin}]\nmax_actions: 2\n`
  );
  await using c = await h.connect();
  assert.equal((await c.call("browser_navigate", { url: `${h.site.origin}/` })).isError, false);
  assert.equal((await c.call("browser_navigate", { url: `${h.site.origin}/next` })).isError, false);
  const third = await c.call("browser_navigate", { url: `${h.site.origin}/` });
  assert.match(third.text, /^denied: LIMIT_ACTIONS \(2 actions used\)/);
  // Reading is not an action.
  assert.equal((await c.call("browser_snapshot")).isError, false);
  await using h2 = await startHarness((site) =>
    `allowed_origins: [${site.origin}]\nmax_seconds: 1\n`
  );
  await using c2 = await h2.connect();
  // A fixed wait on purpose: max_seconds counts wall time, so a second must really pass.
  await new Promise((r) => setTimeout(r, 1_100));
  const late = await c2.call("browser_navigate", { url: `${h2.site.origin}/` });
  assert.match(late.text, /^denied: LIMIT_TIME/);
});
