/**
 * Generated-credential capture under attack, continued from tests/capture_attack_test.ts
 * (what must hold is listed there; the world is tests/helpers/capture_attack.ts): Linear
 * registration and answer pages that swap, redirect, show the secret twice or in their title,
 * send it elsewhere or open an alert; failed checks that must submit nothing; a model that
 * calls the tool with junk; and, last, a conversion answer that must not poison other
 * sessions.
 */
import assert from "node:assert/strict";
import { Vault } from "../vault/mod.ts";
import { GITHUB_OUTPUTS, LINEAR_OUTPUTS, mintedSecrets } from "./helpers/capture_world.ts";
import {
  conversionBody,
  type HostileGithubOptions,
  htmlPage,
  jsonAnswer,
} from "./fixtures/hostile_vendor.ts";
import {
  assertTainted,
  hostileCapture,
  randomHex,
  type SharedSession,
  STABLE_CODE,
} from "./helpers/capture_attack.ts";
import type { TestClient } from "./helpers/harness.ts";

Deno.test("browser_capture_credentials under attack (Linear): hostile registration and answer pages, failed checks and a hostile model", async (t) => {
  await using h = await hostileCapture();
  const { w, github, linear, bystander, secrets, vendorSeen, posts, attempt, exfil, TARGETS } = h;
  /**
   * The session of the pages that run no script, or one that changes only its own page's
   * submission (a listener: no tab, no timer, nothing kept): the swaps at submit, a form
   * aimed elsewhere, a redirect, answer pages shaped wrong; and the answer pages whose script
   * shows or sends the secret, which a capture always leaves for a blank page before it
   * returns (see {@link SharedSession}).
   */
  const plain: SharedSession = {};

  await t.step(
    "registration page swaps the action or adds a field at submit: refused, nothing minted",
    async () => {
      for (
        const head of [
          `<script>document.addEventListener("submit", (e) => { e.target.action = ${
            JSON.stringify(`${bystander.origin}/acme/settings/api/applications`)
          }; }, true);</script>`,
          `<script>document.addEventListener("submit", (e) => { const i = document.createElement("input"); i.name = "leak"; i.value = "x"; e.target.appendChild(i); }, true);</script>`,
          `<script>document.addEventListener("formdata", (e) => { e.formData.set("redirectUris", ${
            JSON.stringify(`${bystander.origin}/cb`)
          }); }, true);</script>`,
        ]
      ) {
        const m = linear.minted.length;
        const a = await attempt("linear_oauth_app", { linear: { formHead: head } }, {
          shared: plain,
        });
        assert.equal(a.out.isError, true, a.out.text);
        assert.match(a.out.text, /CAPTURE_WRITE_REFUSED/);
        assert.equal(linear.minted.length, m);
        assert.deepEqual(a.toBystander.filter((r) => r.method !== "GET"), []);
      }
    },
  );

  await t.step(
    "a registration form whose action points to another origin: CAPTURE_PAGE_UNEXPECTED, nothing submitted",
    async () => {
      const before = posts();
      const by = bystander.requests.length;
      const a = await attempt("linear_oauth_app", {
        linear: { formAction: `${bystander.origin}/acme/settings/api/applications` },
      }, { shared: plain });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_PAGE_UNEXPECTED/);
      assert.equal(posts(), before);
      assert.deepEqual(bystander.requests.slice(by).filter((r) => r.method !== "GET"), []);
    },
  );

  await t.step(
    "a registration page that redirects to another origin: CAPTURE_PAGE_UNEXPECTED",
    async () => {
      const before = posts();
      const a = await attempt("linear_oauth_app", {
        linear: {
          routes: {
            "/acme/settings/api/applications/new": () =>
              new Response(null, {
                status: 302,
                headers: { location: `${bystander.origin}/acme/settings/api/applications/new` },
              }),
          },
        },
      }, { shared: plain });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_PAGE_UNEXPECTED/);
      assert.equal(posts(), before);
    },
  );

  await t.step(
    "an answer page that shows the secret also in its title and URL: written, and shown nowhere",
    async () => {
      const a = await attempt("linear_oauth_app", {
        linear: {
          answer: (app) =>
            new Response(null, {
              status: 303,
              headers: {
                location:
                  `/acme/apps/created?client_id=${app.client_id}&client_secret=${app.client_secret}`,
              },
            }),
          routes: {
            "/acme/apps/created": (url) => {
              const id = url.searchParams.get("client_id") ?? "";
              const secret = url.searchParams.get("client_secret") ?? "";
              return htmlPage(
                `Secret ${secret}`,
                `<code id="oauth-client-id">${id}</code><code id="oauth-client-secret">${secret}</code>
<script>console.log("secret " + ${
                  JSON.stringify("")
                } + location.search); history.replaceState(null, "", "/acme/apps/" + ${
                  JSON.stringify("")
                } + new URLSearchParams(location.search).get("client_secret"));</script>`,
              );
            },
          },
        },
      }, { shared: plain });
      assert.equal(a.out.isError, false, a.out.text);
    },
  );

  await t.step(
    "an answer page with two #oauth-client-secret elements: CAPTURE_PAGE_UNEXPECTED, nothing written",
    async () => {
      const a = await attempt("linear_oauth_app", {
        linear: {
          answer: (app) =>
            htmlPage(
              "Application created",
              `<code id="oauth-client-id">${app.client_id}</code>
<code id="oauth-client-secret">${app.client_secret}</code>
<code id="oauth-client-secret">${randomHex(32)}</code>`,
            ),
        },
      }, { shared: plain });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_PAGE_UNEXPECTED/);
    },
  );

  await t.step(
    "an answer page whose secret is not shaped like Linear's: CAPTURE_VENDOR_ANSWER",
    async () => {
      const odd = `odd value ${randomHex(16)}`;
      const a = await attempt("linear_oauth_app", {
        linear: {
          answer: (app) =>
            htmlPage(
              "Application created",
              `<code id="oauth-client-id">${app.client_id}</code><code id="oauth-client-secret">${odd}</code>`,
            ),
        },
      }, { shared: plain, extraSecrets: () => [odd] });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_VENDOR_ANSWER/);
    },
  );

  await t.step(
    "an answer page whose script sends the shown secret to another origin: the secret never leaves",
    async () => {
      await attempt("linear_oauth_app", {
        linear: {
          answer: (app) =>
            htmlPage(
              "Application created",
              `<code id="oauth-client-id">${app.client_id}</code><code id="oauth-client-secret">${app.client_secret}</code>`,
              exfil(
                TARGETS,
                `(document.getElementById("oauth-client-secret") || {}).textContent`,
                "answer",
              ),
            ),
        },
      }, { shared: plain });
    },
  );

  /** The alert's session, once its step is done: the refusals' too (see below). */
  let dialogSession: TestClient | undefined;

  await t.step(
    "an answer page that opens an alert() showing the secret: fails closed or captures, the text shown nowhere",
    async () => {
      const { ids, targets } = await w.grant("linear_oauth_app", LINEAR_OUTPUTS);
      const m = linear.minted.length;
      linear.options.answer = (app) =>
        htmlPage(
          "Application created",
          `<code id="oauth-client-id">${app.client_id}</code><code id="oauth-client-secret">${app.client_secret}</code>
<script>setTimeout(() => alert("secret: " + document.getElementById("oauth-client-secret").textContent), 0);</script>`,
        );
      const c = await w.connect();
      dialogSession = c;
      let out;
      try {
        out = await c.call("browser_capture_credentials", {
          workflow: "linear_oauth_app",
          outputs: ids,
        });
      } finally {
        delete linear.options.answer;
      }
      secrets.push(...mintedSecrets(linear.minted.slice(m)));
      const problems: string[] = [];
      if (!STABLE_CODE.test(out.text)) {
        problems.push(`the call ended without a capture status: ${JSON.stringify(out)}`);
      }
      const written = () => Object.values(targets).filter((id) => Vault.has(w.db, id));
      const before = written();
      const dialog = await c.call("browser_handle_dialog", { accept: false });
      if (/secret:/.test(dialog.text)) problems.push(`the dialog's text: ${dialog.text}`);
      await new Promise((r) => setTimeout(r, 3_000));
      const after = written();
      if (after.length !== before.length) {
        problems.push(
          `the capture went on after the call returned and wrote ${after.join(", ")}; grants now ${
            (await Promise.all(Object.values(ids).map((id) => w.grants.get(id))))
              .map((g) => g?.state).join(", ")
          }: the model was never told`,
        );
      }
      await assertTainted(c, github.origin).catch((e) => problems.push(String(e)));
      assert.deepEqual(problems, []);
    },
  );

  await t.step(
    "registration submitted into a popup (target=_blank): fails closed, nothing written",
    async () => {
      const a = await attempt("linear_oauth_app", {
        linear: {
          formHead:
            `<script>document.addEventListener("submit", (e) => { e.target.target = "_blank"; }, true);</script>`,
        },
      });
      assert.equal(a.out.isError, true, a.out.text);
    },
  );

  // --- a failed check submits nothing ------------------------------------------------

  /**
   * The session of the refusals before the vendor and of the junk calls: each names its own
   * code, and the vendor must see nothing of any. The alert's session, whose capture left its
   * page for a blank one and opened no tab (nothing in it talks to the vendor any more), so
   * no browser is started for it; a fresh one if that step failed before it connected.
   */
  let refusals: Promise<TestClient> | undefined;
  const refusalSession = () =>
    refusals ??= dialogSession ? Promise.resolve(dialogSession) : w.connect();

  await t.step(
    "failed checks (one grant for every output, a fill grant, another agent's grants): the vendor sees nothing",
    async () => {
      const c = await refusalSession();
      const g = await w.grant("github_app", GITHUB_OUTPUTS);
      const fill = (await w.grants.add({
        secret_id: "placeholder",
        agent: "alice",
        purpose: "fill",
        mode: "once",
        expires: "1h",
        uses: [{ kind: "fill", allowed_origins: [github.origin] }],
      }, { approve: true })).id;
      const bob = await w.grant("github_app", GITHUB_OUTPUTS, { agent: "bob" });
      for (
        const outputs of [
          { pem: g.ids.pem, client_secret: g.ids.pem, webhook_secret: g.ids.pem },
          { ...g.ids, webhook_secret: fill },
          bob.ids,
        ]
      ) {
        const before = vendorSeen();
        const out = await c.call("browser_capture_credentials", {
          workflow: "github_app",
          outputs,
        });
        assert.equal(out.isError, true, out.text);
        assert.match(out.text, /GRANT_[A-Z_]+/);
        assert.match(out.text, /nothing (was )?submitted/);
        assert.equal(vendorSeen(), before, "the vendor saw no request at all");
      }
      for (const id of [...Object.values(g.targets), ...Object.values(bob.targets)]) {
        assert.equal(Vault.has(w.db, id), false);
      }
      for (const id of [...Object.values(g.ids), ...Object.values(bob.ids)]) {
        assert.equal((await w.grants.get(id))?.state, "active");
      }
      assert.equal(await w.reveal("placeholder"), "not-a-minted-value-0000");
      await assertTainted(c, github.origin);
    },
  );

  // --- a hostile model ------------------------------------------------------------------

  await t.step("junk arguments: a clear INVALID_ARGUMENTS, nothing sent", async () => {
    const c = await refusalSession();
    const g = await w.grant("github_app", GITHUB_OUTPUTS);
    const huge = "h".repeat(200_000);
    const thousand: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) thousand[`out${i}`] = `g_${i}`;
    const cases: [Record<string, unknown> | null, RegExp, RegExp][] = [
      [{}, /INVALID_ARGUMENTS/, /workflow/],
      [{ outputs: g.ids }, /INVALID_ARGUMENTS/, /workflow/],
      [{ workflow: "github_app" }, /INVALID_ARGUMENTS/, /outputs/],
      [{ workflow: "aws_iam_user", outputs: g.ids }, /INVALID_ARGUMENTS/, /workflow/],
      [{ workflow: "github_app", outputs: "g_abc" }, /INVALID_ARGUMENTS/, /outputs/],
      [{ workflow: "github_app", outputs: [g.ids.pem] }, /INVALID_ARGUMENTS/, /outputs/],
      [{ workflow: "github_app", outputs: { pem: 5 } }, /INVALID_ARGUMENTS/, /outputs/],
      [{ workflow: "github_app", outputs: null }, /INVALID_ARGUMENTS/, /outputs/],
      [{ workflow: huge, outputs: g.ids }, /INVALID_ARGUMENTS/, /workflow/],
      [{ workflow: "github_app", outputs: { [huge]: "g_x" } }, /INVALID_ARGUMENTS/, /outputs/],
      [{ workflow: "github_app", outputs: { pem: huge } }, /INVALID_ARGUMENTS/, /outputs/],
      [
        { workflow: "github_app", outputs: g.ids, url: `${bystander.origin}/x` },
        /INVALID_ARGUMENTS/,
        /url|[Uu]nrecognized/,
      ],
      [{ workflow: ["github_app"], outputs: g.ids }, /INVALID_ARGUMENTS/, /workflow/],
      // The MCP layer refuses non-object arguments itself, before the tool.
      [null, /INVALID_ARGUMENTS|expected record/, /workflow|outputs|arguments/],
    ];
    // Every case runs; every broken one is reported together.
    const problems: string[] = [];
    const check = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        problems.push(err instanceof Error ? err.message.slice(0, 300) : String(err));
      }
    };
    for (const [args, code, names] of cases) {
      const before = vendorSeen();
      const out = await c.call(
        "browser_capture_credentials",
        args as Record<string, unknown>,
      );
      const what = JSON.stringify(args)?.slice(0, 60);
      check(() => {
        assert.equal(out.isError, true, `${what}: ${out.text}`);
        assert.match(out.text, code, `${what}: ${out.text}`);
        assert.match(out.text, names, `${what}: ${out.text}`);
        assert.ok(
          out.text.length < 2_000,
          `${what}: the error echoes the input (${out.text.length} chars)`,
        );
        assert.equal(vendorSeen(), before);
      });
    }
    // Well-formed but not the workflow's outputs: a capture status, nothing sent.
    for (
      const outputs of [
        thousand,
        // A computed key: an own "__proto__" property, as JSON.parse makes one (its own
        // grants: a schema that drops the key would run the capture with them).
        { ...(await w.grant("github_app", GITHUB_OUTPUTS)).ids, ["__proto__"]: g.ids.pem },
        { ...g.ids, constructor: g.ids.pem },
        {},
      ]
    ) {
      const before = vendorSeen();
      const out = await c.call("browser_capture_credentials", {
        workflow: "github_app",
        outputs,
      });
      const what = JSON.stringify(outputs).slice(0, 60);
      check(() => {
        assert.equal(out.isError, true, `${what}: ${out.text}`);
        assert.match(out.text, /CAPTURE_OUTPUTS|INVALID_ARGUMENTS/, `${what}: ${out.text}`);
        assert.ok(out.text.length < 2_000, `${what}: the error is long (${out.text.length})`);
        assert.equal(vendorSeen(), before);
      });
    }
    assert.deepEqual(problems, []);
    for (const id of Object.values(g.targets)) assert.equal(Vault.has(w.db, id), false);
    for (const id of Object.values(g.ids)) {
      assert.equal((await w.grants.get(id))?.state, "active");
    }
  });

  // --- the leak search -------------------------------------------------------------------

  // This world's values (13 in a run: Linear mints two per capture, and most steps here fail
  // closed); the GitHub file searches its own 200 or so.
  await t.step(
    "the leak search: no code or minted value anywhere, in any encoding",
    () => h.leakSearch(8),
  );

  // --- last: it changes what the whole process redacts and refuses ------------------------

  await t.step(
    "a conversion answer whose unused field is a common string does not poison other sessions",
    async () => {
      // client_id is not even an output of github_app, and the schema ignores it.
      const m = github.minted.length;
      Object.assign(
        github.options,
        {
          conversion: (app) => jsonAnswer({ ...conversionBody(app), client_id: "https://" }, 201),
        } satisfies HostileGithubOptions,
      );
      const g = await w.grant("github_app", GITHUB_OUTPUTS);
      let out;
      try {
        // In the plain pages' session (tainted long since); the clean one below is new.
        out = await (plain.client ?? await w.connect()).call("browser_capture_credentials", {
          workflow: "github_app",
          outputs: g.ids,
        });
      } finally {
        delete github.options.conversion;
      }
      assert.match(out.text, /CAPTURE_DONE/, out.text);
      assert.equal(github.minted.length, m + 1);
      secrets.push(...mintedSecrets(github.minted.slice(m)));
      // Another, clean session of the same runtime: its calls are its own.
      const fresh = await w.connect();
      const nav = await fresh.call("browser_navigate", { url: `${linear.origin}/` });
      const problems: string[] = [];
      if (/SECRET_VALUE/.test(nav.text)) {
        problems.push(`a clean session's navigation to an allowed origin: ${nav.text}`);
      }
      const lin = await w.grant("linear_oauth_app", LINEAR_OUTPUTS);
      // Its Linear capture, in the same clean session: the first capture it runs.
      const cap = await fresh.call("browser_capture_credentials", {
        workflow: "linear_oauth_app",
        outputs: lin.ids,
      });
      if (cap.isError) problems.push(`a clean session's Linear capture: ${cap.text}`);
      secrets.push(...mintedSecrets(linear.minted.slice(-1)));
      assert.deepEqual(problems, [], "one vendor's answer poisoned every session");
    },
  );
});
