/**
 * Approve the request, not the click (issue 19, class 1): what the operator approves is
 * exactly what the site receives. Each attack is a hostile page rewriting its form's
 * submission around the agent's click; each is checked against what the operator was shown
 * (the approvals API) and what the site recorded, byte for byte.
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { egressSecrets, processRedactor } from "../runtime/redact/mod.ts";
import type { RequestView } from "../runtime/net/request_view.ts";
import { html, serveTwoOrigins, type TwoOriginSite } from "./fixtures/two_origins.ts";
import {
  agentTransport,
  eventually,
  refOf,
  startTestRuntime,
  TestClient,
} from "./helpers/harness.ts";
import type { Runtime } from "../runtime/cli/start.ts";

/** A secret the runtime holds (as after a login): it must never be shown to the operator. */
const SECRET = "Zq7-vault-Secret-9xKp3";

const PAYEE_RTL = "\u202Eecila\u200B";

/** The form every page shows; `script` is the page's attack. */
function payPage(script = "", fields = ""): Response {
  return html(`
    <form id="f" method="post" action="/transfer">
      <input name="amount" value="10"><input name="to" value="alice">${fields}
      <button type="submit">Pay</button>
    </form>
    <script>const form = document.getElementById("f");${script}</script>`);
}

const ATTACKS: Record<string, () => Response> = {
  "/plain": () => payPage(),
  // Rewrites the entries after the click (what a confirm on the click once approved).
  "/formdata": () =>
    payPage(`form.addEventListener("formdata", (e) => {
      e.formData.set("amount", "10000"); e.formData.set("to", "mallory"); });`),
  // Swaps the action's query at submit.
  "/query": () =>
    payPage(`form.addEventListener("submit", () => { form.action = "/transfer?to=mallory"; });`),
  // Cancels the submit and posts a hidden form into an iframe instead.
  "/iframe": () =>
    payPage(`form.addEventListener("submit", (e) => {
      e.preventDefault();
      const f = document.createElement("iframe"); f.name = "hid"; f.style.display = "none";
      document.body.append(f);
      const h = document.createElement("form"); h.method = "post"; h.action = "/transfer";
      h.target = "hid";
      h.innerHTML = '<input name="amount" value="10000"><input name="to" value="mallory">';
      document.body.append(h); h.submit(); });`),
  // Cancels the submit and writes with a script, the way single-page apps submit.
  "/fetch": () =>
    payPage(`form.addEventListener("submit", (e) => {
      e.preventDefault();
      fetch("/transfer", { method: "POST", body: new URLSearchParams({ amount: "10000", to: "mallory" }) });
    });`),
  // Cancels the submit and submits later, after the action has ended.
  "/later": () =>
    payPage(`form.addEventListener("submit", (e) => {
      e.preventDefault();
      setTimeout(() => HTMLFormElement.prototype.submit.call(form), 2500); });`),
  // Entries an old view left out: many fields, a multi-select, a custom element, a long value.
  "/many": () =>
    payPage(
      `customElements.define("x-hidden", class extends HTMLElement {
        static formAssociated = true;
        constructor() { super(); this.attachInternals().setFormValue("custom-value"); }
      });`,
      Array.from({ length: 250 }, (_, i) => `<input type="hidden" name="f${i}" value="v${i}">`)
        .join("") +
        `<select name="pick" multiple><option selected>one</option><option selected>two</option><option selected>three</option></select>` +
        `<x-hidden name="custom"></x-hidden>` +
        `<input type="hidden" name="memo" value="${"m".repeat(5000)}">` +
        `<input type="hidden" name="payee" value="${PAYEE_RTL}">`,
    ),
  // A stored secret in a field and in the action's query.
  "/secret": () =>
    payPage(
      `form.action = "/transfer?token=${SECRET}";`,
      `<input type="hidden" name="note" value="key ${SECRET.toUpperCase()} end">`,
    ),
};

interface World extends AsyncDisposable {
  runtime: Runtime;
  site: TwoOriginSite;
  client: TestClient;
  api(path: string, init?: RequestInit): Promise<Response>;
  pending(): Promise<Approval[]>;
}

interface Approval {
  id: string;
  kind: string;
  method: string;
  request: RequestView;
}

async function world(extraPolicy = "", readOnly = true): Promise<World> {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-approve-" });
  const site = serveTwoOrigins(() => ({
    ...ATTACKS,
    "/transfer": () => html("<p>sent</p>", "Sent"),
  }));
  const runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${site.origin}]\nread_only: ${readOnly}\nconfirm_writes: true\nconfirm_timeout_seconds: 30\n${extraPolicy}`,
  );
  const client = new Client({ name: "approve-test", version: "0" });
  await client.connect(await agentTransport(runtime));
  const c = new TestClient(client);
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${runtime.url}${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${runtime.adminToken}`,
        "content-type": "application/json",
        ...init.headers,
      },
    });
  return {
    runtime,
    site,
    client: c,
    api,
    pending: async () => await (await api("/api/approvals?state=pending")).json() as Approval[],
    async [Symbol.asyncDispose]() {
      await c[Symbol.asyncDispose]();
      await runtime[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/** Clicks Pay on `path`; returns the click's result once `decide` answered its approvals. */
async function payOn(
  w: World,
  path: string,
  decide: (a: Approval) => "approve" | "deny" | "wait" | Promise<"approve" | "deny">,
): Promise<{ text: string; seen: Approval[] }> {
  const page = await w.client.call("browser_navigate", { url: `${w.site.origin}${path}` });
  const click = w.client.call("browser_click", { ref: refOf(page.text, /button "Pay"/) });
  let done = false;
  click.finally(() => done = true);
  const seen: Approval[] = [];
  while (!done) {
    for (const a of await w.pending()) {
      if (seen.some((s) => s.id === a.id)) continue;
      seen.push(a);
      const decision = await decide(a);
      if (decision === "wait") continue;
      const r = await w.api(`/api/approvals/${a.id}`, {
        method: "POST",
        body: JSON.stringify({ decision }),
      });
      assert.equal(r.status, 200);
      await r.body?.cancel();
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { text: (await click).text, seen };
}

/** The bodies the site received at /transfer (from the `from`th on), as entries. */
function received(w: World, from = 0): [string, string][][] {
  return (w.site.posts.get("/transfer") ?? []).slice(from).map((b) => [...new URLSearchParams(b)]);
}

/** Where a case sharing a world starts: the posts and audit rows before it are not its own. */
interface Since {
  posts: number;
  seq: number;
}

function shown(a: Approval): [string, string][] {
  return a.request.entries.map((e) => [e.name.text, e.value.text]);
}

Deno.test("approvals: with script_writes: confirm a script's write is shown and approved on its own", async () => {
  await using w = await world("script_writes: confirm\n");
  const r = await payOn(w, "/fetch", () => "approve");
  assert.equal(r.seen.length, 1);
  assert.equal(r.seen[0].kind, "script");
  assert.deepEqual(shown(r.seen[0]), [["amount", "10000"], ["to", "mallory"]]);
  assert.deepEqual(received(w), [[["amount", "10000"], ["to", "mallory"]]]);
});

/** The console's approvals page, as a logged-in operator's browser gets it. */
async function consolePage(w: World): Promise<string> {
  const login = await fetch(`${w.runtime.url}/login`, {
    method: "POST",
    body: new URLSearchParams({ token: w.runtime.adminToken }),
    redirect: "manual",
  });
  await login.body?.cancel();
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0];
  return await (await fetch(`${w.runtime.url}/`, { headers: { cookie } })).text();
}

/** Every run of 8 characters of `secret`, case folded: none may be in what is shown. */
function leaks(text: string, secret: string): string[] {
  const folded = text.toLowerCase();
  const out: string[] = [];
  for (let i = 0; i + 8 <= secret.length; i++) {
    const run = secret.slice(i, i + 8).toLowerCase();
    if (folded.includes(run)) out.push(run);
  }
  return out;
}

Deno.test("approvals: control: without read_only the rewrites reach the site unseen (the attacks work)", async () => {
  await using w = await world("", false);
  const r = await payOn(w, "/formdata", () => "approve");
  assert.deepEqual(r.seen, []);
  await payOn(w, "/iframe", () => "approve");
  assert.ok(await eventually(() => received(w).length === 2));
  assert.deepEqual(received(w), [
    [["amount", "10000"], ["to", "mallory"]],
    [["amount", "10000"], ["to", "mallory"]],
  ]);
});

// One read_only runtime and agent session for the cases of that policy: each case navigates
// to its own attack page, starts with nothing pending, and reads only the posts and audit
// rows after its start (`Since`). Each case is a step.
Deno.test("approvals on one read_only runtime and session", async (t) => {
  await using w = await world();
  const step = (name: string, fn: (since: Since) => Promise<void>) =>
    t.step(name, async () => {
      assert.deepEqual(await w.pending(), [], "nothing an earlier case left is pending");
      const since = {
        posts: w.site.posts.get("/transfer")?.length ?? 0,
        seq: (await w.runtime.audit.rows(0, 1_000_000)).at(-1)?.seq ?? 0,
      };
      await fn(since);
    });

  await step(
    "approvals: the plain form's own submission is shown whole and sent once",
    async (since) => {
      const r = await payOn(w, "/plain", () => "approve");
      assert.equal(r.seen.length, 1, r.text);
      assert.equal(r.seen[0].kind, "form");
      assert.deepEqual(shown(r.seen[0]), [["amount", "10"], ["to", "alice"]]);
      assert.deepEqual(received(w, since.posts), [[["amount", "10"], ["to", "alice"]]]);
      const body = w.site.posts.get("/transfer")![since.posts];
      assert.equal(r.seen[0].request.sha256, createHash("sha256").update(body).digest("hex"));
      assert.match(
        r.text,
        /the operator approved the POST form to http:\/\/127\.0\.0\.1:\d+; sent once/,
      );
    },
  );

  await step(
    "approvals: what a formdata listener or a swapped query sends is what the operator sees",
    async (since) => {
      const a = await payOn(w, "/formdata", () => "approve");
      assert.deepEqual(shown(a.seen[0]), [["amount", "10000"], ["to", "mallory"]]);
      assert.deepEqual(received(w, since.posts), [[["amount", "10000"], ["to", "mallory"]]]);
      const q = await payOn(w, "/query", () => "approve");
      assert.match(q.seen[0].request.url.text, /\/transfer\?to=mallory$/);
      assert.deepEqual(
        q.seen[0].request.query.map((e) => [e.name.text, e.value.text]),
        [["to", "mallory"]],
      );
      assert.ok(w.site.hits.includes("POST /transfer?to=mallory"));
    },
  );

  await step(
    "approvals: a denied request never reaches the site and the agent hears CONFIRM_DENIED",
    async (since) => {
      const r = await payOn(w, "/formdata", () => "deny");
      assert.equal(r.seen.length, 1);
      assert.match(r.text, /^denied: CONFIRM_DENIED/);
      assert.deepEqual(received(w, since.posts), []);
    },
  );

  await step(
    "approvals: an iframe replay, a script write and a write after the action are refused unasked",
    async (since) => {
      for (const path of ["/iframe", "/fetch"]) {
        const r = await payOn(w, path, () => "approve");
        assert.deepEqual(r.seen, [], `${path}: nothing offered for approval`);
        assert.match(r.text, /denied: SCRIPT_WRITE_REFUSED/, path);
      }
      const later = await payOn(w, "/later", () => "approve");
      assert.deepEqual(later.seen, []);
      const postReasons = async () =>
        (await w.runtime.audit.rows(since.seq)).filter((r) =>
          r.kind === "request" && r.method === "POST"
        )
          .map((r) => r.reason);
      // The page submits 2.5 s after the action ended: wait for its refusal to be audited.
      assert.ok(
        await eventually(async () => (await postReasons()).includes("READ_ONLY_WRITE")),
        "the late submit was judged",
      );
      assert.deepEqual(await w.pending(), []);
      assert.deepEqual(received(w, since.posts), [], "nothing reached the site");
      const reasons = await postReasons();
      assert.ok(reasons.includes("SCRIPT_WRITE_REFUSED"), reasons.join());
      assert.ok(
        reasons.includes("READ_ONLY_WRITE"),
        "the late submit is refused as read_only says",
      );
    },
  );

  await step(
    "approvals: every entry is shown (250 fields, a multi-select, a custom element, a long value) and bidi text is escaped",
    async (since) => {
      const r = await payOn(w, "/many", () => "approve");
      const a = r.seen[0];
      const got = received(w, since.posts)[0];
      assert.equal(a.request.entries.length, got.length);
      assert.ok(got.length >= 250 + 2 + 3 + 1 + 1 + 1);
      assert.deepEqual(
        shown(a).filter(([n]) => n === "pick").map(([, v]) => v),
        ["one", "two", "three"],
      );
      assert.deepEqual(shown(a).find(([n]) => n === "custom"), ["custom", "custom-value"]);
      const memo = a.request.entries.find((e) => e.name.text === "memo")!;
      assert.equal(memo.value.text, "m".repeat(5000));
      assert.equal(memo.value.length, 5000);
      const payee = a.request.entries.find((e) => e.name.text === "payee")!;
      assert.equal(payee.value.text, "\\u{202E}ecila\\u{200B}");
      assert.ok(payee.value.flags.includes("bidi"));
      assert.ok(a.request.flags.includes("bidi"));
      // Escaped everywhere the operator looks: no raw bidi character in the API or the page.
      const page = await (await w.api("/")).text();
      const json = await (await w.api("/api/approvals")).text();
      for (const text of [page, json]) {
        assert.doesNotMatch(text, /[\u202A-\u202E\u2066-\u2069\u200B]/);
      }
    },
  );

  await step(
    "approvals: a stored secret in a field or the URL is redacted in the API and the console page",
    async (since) => {
      processRedactor().add([SECRET]);
      const outputs: string[] = [];
      const r = await payOn(w, "/secret", async (): Promise<"approve"> => {
        outputs.push(await (await w.api("/api/approvals")).text(), await consolePage(w));
        return "approve";
      });
      assert.match(outputs[0], /\[redacted\]/);
      assert.match(outputs[1], /approv/i);
      outputs.push(
        r.text,
        ...w.client.outputs,
        JSON.stringify(await w.runtime.audit.rows(since.seq)),
      );
      for (const out of outputs) assert.deepEqual(leaks(out, SECRET), []);
      // What was approved went out as it was: the page's own bytes, the secret among them.
      assert.equal(received(w, since.posts).length, 1);
    },
  );

  // Last: the guarded credential stays in the process's egress check.
  await step(
    "approvals: a guarded credential in a held request is refused before anyone is asked (SECRET_IN_REQUEST)",
    async (since) => {
      processRedactor().add([SECRET]);
      egressSecrets().add([SECRET]);
      const r = await payOn(w, "/secret", () => "approve");
      assert.deepEqual(r.seen, [], "nothing offered for approval");
      assert.deepEqual(received(w, since.posts), [], "nothing reached the site");
      const rows = await w.runtime.audit.rows(since.seq);
      assert.ok(rows.some((row) => row.reason === "SECRET_IN_REQUEST"));
      for (const out of [r.text, ...w.client.outputs, JSON.stringify(rows)]) {
        assert.deepEqual(leaks(out, SECRET), []);
      }
    },
  );
});
