/**
 * Taint covers dialogs (issue 19, class 3): after browser_login, a signed-in page's dialog
 * (alert, confirm, prompt with default text, beforeunload; opened by the page, a frame or a
 * popup; before, during or between calls) never shows its text to the model, on any path:
 * the DIALOG_OPEN refusal, a call it cut short (browser_login, browser_close), notices,
 * snapshots. And it can be dismissed, and only dismissed.
 */
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DatabaseSync } from "node:sqlite";
import { rawKeySource, Vault } from "../vault/mod.ts";
import { Grants } from "../runtime/grants/mod.ts";
import { SqliteGrantStore } from "../runtime/store/sqlite_grant_store.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { secretForms } from "../runtime/redact/mod.ts";
import { renderWithheldDialog } from "../runtime/snapshot/dialog_view.ts";
import {
  ANSWER_BOUND_MS,
  type CallOutcome,
  keyedTransport,
  startTestRuntime,
  TestClient,
} from "./helpers/harness.ts";
import { serveDialogLoginSite } from "./fixtures/dialog_login_site.ts";

const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
const USER = "dana.scully@example.test";
const PASSWORD = "Dialog-Planted-Passw0rd-4e7b";
/** What the signed-in pages show and put into their dialogs. */
const MARKER = "SignedInMarker-5e1d07c2";
const DEFAULT_MARKER = "PromptDefaultMarker-c39a11";
const PATH_MARKER = "PathMarker-8b2f60";
const WITHHELD = /dialog open on tab (\d+); its text is not shown: this session is tainted/;

async function world(extra = "") {
  const site = serveDialogLoginSite({
    user: USER,
    password: PASSWORD,
    marker: MARKER,
    defaultMarker: DEFAULT_MARKER,
    pathMarker: PATH_MARKER,
  });
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-taint-dialog-" });
  const db = openDatabase(databasePath(dataDir));
  {
    using vault = await Vault.open(db, rawKeySource(KEY));
    await vault.add("dl-user", "username", USER);
    await vault.add("dl-pass", "password", PASSWORD);
  }
  // Writes allowed: the login's submission is not what these tests are about.
  const runtime = await startTestRuntime(
    dataDir,
    `allowed_origins: [${site.origin}, ${site.otherOrigin}]\nread_only: false\n${extra}`,
    { vaultKey: { key: KEY } },
  );
  const grants = new Grants(new SqliteGrantStore(db), {
    audit: { append() {} },
    secrets: { has: (id) => Vault.has(db, id) },
  });
  for (const secret_id of ["dl-user", "dl-pass"]) {
    await grants.add({
      secret_id,
      agent: "dana",
      purpose: "dialog test",
      mode: "standing",
      expires: "1h",
      uses: [{ kind: "fill", allowed_origins: [site.origin] }],
    }, { approve: true });
  }
  const { key } = await runtime.agents.add("dana");
  const clients: TestClient[] = [];
  return {
    site,
    dataDir,
    /** A new MCP session (its own browser) for one variant. */
    async connect(): Promise<TestClient> {
      const client = new Client({ name: "taint-dialog-test", version: "0" });
      await client.connect(keyedTransport(runtime.url!, key));
      const c = new TestClient(client);
      clients.push(c);
      return c;
    },
    /** Every text any client received. */
    outputs: () => clients.flatMap((c) => c.outputs),
    /** The audit's last row now: a test's rows are those after it. */
    auditEnd(): number {
      const ro = new DatabaseSync(databasePath(dataDir), { readOnly: true });
      const n = Number(ro.prepare("SELECT COALESCE(MAX(seq), 0) AS n FROM audit").get()!.n);
      ro.close();
      return n;
    },
    /** The action rows after `since` (from {@link auditEnd}). */
    auditRows(since = 0): { kind: string; decision: string; reason: string }[] {
      const ro = new DatabaseSync(databasePath(dataDir), { readOnly: true });
      const rows = ro.prepare(
        "SELECT kind, decision, reason FROM audit WHERE source = 'action' AND seq > ?",
      ).all(since).map((r) => ({
        kind: String(r.kind),
        decision: String(r.decision),
        reason: String(r.reason),
      }));
      ro.close();
      return rows;
    },
    async [Symbol.asyncDispose]() {
      for (const c of clients) await c[Symbol.asyncDispose]();
      await runtime[Symbol.asyncDispose]();
      db.close();
      await site[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

type World = Awaited<ReturnType<typeof world>>;

/**
 * The world of the first two tests (one runtime for both, under the same policy): every
 * variant is a session of its own (its own browser and fresh profile), each test asserts on
 * the audit rows after its own start, and the second test ends it.
 */
let taintedWorld: Promise<World> | undefined;
const tainted = () => taintedWorld ??= world();

/** Nothing the signed-in pages chose reached the model: no marker, no form of a value. */
function assertNothingShown(texts: string[], where: string) {
  const planted = [MARKER, DEFAULT_MARKER, PATH_MARKER, ...secretForms(PASSWORD)];
  for (const text of texts) {
    for (const p of planted) assert.ok(!text.includes(p), `${where}: ${p} in ${text}`);
  }
}

/** Navigates to the variant's login page and signs in. */
async function signIn(w: World, c: TestClient, v: string): Promise<CallOutcome> {
  const nav = await c.call("browser_navigate", { url: `${w.site.origin}/login?v=${v}` });
  assert.equal(nav.isError, false, nav.text);
  return await c.call("browser_login");
}

/**
 * With a withheld dialog open: every tool a tainted session may call says so without its
 * text (but those that leave the tab: `browser_close` closes it, dismissing the dialog, as
 * `dialog_chain_test.ts` shows), accepting and typing a prompt's text are refused, and
 * `{"accept": false}` dismisses it. Returns the dismissal's result.
 */
async function dismissWithheld(c: TestClient): Promise<CallOutcome> {
  const allowed: [string, Record<string, unknown>][] = [
    ["browser_snapshot", {}],
    ["browser_find", { text: "a" }],
    ["browser_login", {}],
  ];
  for (const [tool, args] of allowed) {
    const r = await c.call(tool, args);
    assert.match(r.text, /^error: DIALOG_OPEN/, `${tool}: ${r.text}`);
    assert.match(r.text, WITHHELD, tool);
    assert.doesNotMatch(r.text, /untrusted-dialog|message:/, tool);
  }
  for (
    const args of [{ accept: true }, { accept: true, promptText: "x" }, {
      accept: false,
      promptText: "x",
    }]
  ) {
    const r = await c.call("browser_handle_dialog", args);
    assert.match(r.text, /^denied: SESSION_TAINTED \(.*may only be dismissed/, r.text);
  }
  const dismissed = await c.call("browser_handle_dialog", { accept: false });
  assert.equal(dismissed.isError, false, dismissed.text);
  assert.match(dismissed.text, /^dismissed the dialog$/m);
  assert.match(dismissed.text, /status only: this session is tainted/);
  return dismissed;
}

/** Polls with browser_snapshot until a withheld dialog is reported, then dismisses it. */
async function awaitAndDismiss(c: TestClient): Promise<CallOutcome> {
  for (let i = 0; i < 50; i++) {
    const r = await c.call("browser_snapshot");
    if (WITHHELD.test(r.text)) return await dismissWithheld(c);
    assert.match(r.text, /status only: this session is tainted/, r.text);
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("no dialog was reported");
}

/** After every dialog is gone: status only, and the session is still tainted. */
async function assertSettled(c: TestClient) {
  const snap = await c.call("browser_snapshot");
  assert.match(snap.text, /^\s*status only: this session is tainted \(login\)/, snap.text);
  assert.equal((await c.call("browser_find", { text: "a" })).text, snap.text, "find: the same");
  const nav = await c.call("browser_navigate", { url: "http://127.0.0.1:9/" });
  assert.match(nav.text, /^denied: SESSION_TAINTED/);
}

async function eventuallyAnswered(w: World, answer: string) {
  for (let i = 0; i < 50 && !w.site.answers.includes(answer); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(w.site.answers.includes(answer), `the page got ${w.site.answers.join(",")}`);
}

Deno.test({
  name:
    "runTool() withholds a tainted session's dialogs and lets them be dismissed: during browser_login, later, confirm, prompt, beforeunload",
  // The runtime outlives this test: the next one ends it.
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  const w = await tainted();
  const since = w.auditEnd();

  await t.step("an alert while the signed-in page loads cuts browser_login short", async () => {
    await using c = await w.connect();
    const login = await signIn(w, c, "load");
    // The login was cut short by the dialog: its result is the dialog, withheld.
    assert.match(login.text, WITHHELD, login.text);
    assert.doesNotMatch(login.text, /untrusted-dialog|message:|alert/);
    await dismissWithheld(c);
    await assertSettled(c);
    assert.deepEqual(w.site.signIns, ["load"]);
  });

  await t.step("an alert after browser_login returned: DIALOG_OPEN withheld", async () => {
    await using c = await w.connect();
    const login = await signIn(w, c, "later");
    assert.match(login.text, /login: LOGIN_SUBMITTED|dialog open on tab/, login.text);
    if (WITHHELD.test(login.text)) await dismissWithheld(c);
    else await awaitAndDismiss(c);
    await assertSettled(c);
  });

  await t.step("a confirm() is dismissed: the page hears false", async () => {
    await using c = await w.connect();
    const login = await signIn(w, c, "confirm");
    if (WITHHELD.test(login.text)) await dismissWithheld(c);
    else await awaitAndDismiss(c);
    await eventuallyAnswered(w, "confirm=false");
    await assertSettled(c);
  });

  await t.step("a prompt() with default text is dismissed without typing", async () => {
    await using c = await w.connect();
    const login = await signIn(w, c, "prompt");
    if (WITHHELD.test(login.text)) await dismissWithheld(c);
    else await awaitAndDismiss(c);
    await eventuallyAnswered(w, "prompt=null");
    assert.ok(!w.site.answers.includes("prompt=text"), "no text was typed into the prompt");
    await assertSettled(c);
  });

  await t.step(
    "a beforeunload the login's own submit opens: withheld, dismissed (stay)",
    async () => {
      await using c = await w.connect();
      const login = await signIn(w, c, "beforeunload");
      assert.match(login.text, WITHHELD, login.text);
      assert.doesNotMatch(login.text, /beforeunload/);
      await dismissWithheld(c);
      await assertSettled(c);
      assert.ok(!w.site.signIns.includes("beforeunload"), "the page was not left");
    },
  );

  assertNothingShown(w.outputs(), "a tool result");
  const rows = w.auditRows(since);
  assert.ok(
    rows.some((r) => r.kind === "click" && r.decision === "deny" && r.reason === "SESSION_TAINTED"),
    "accepting in a tainted session is audited as a deny",
  );
  assert.ok(rows.filter((r) => r.reason === "DIALOG_OPEN").length >= 15, "every DIALOG_OPEN too");
});

Deno.test({
  name:
    "runTool() withholds a tainted session's dialogs from frames and popups: cross-origin and same-origin iframe, opener.alert, a popup's own, one opened as browser_close closes the tab; a loop's notice",
  sanitizeOps: false,
  sanitizeResources: false,
}, async (t) => {
  await using w = await tainted();

  for (const v of ["iframe", "iframe-same", "opener"]) {
    await t.step(`${v}: withheld on the signed-in tab and dismissed`, async () => {
      await using c = await w.connect();
      const login = await signIn(w, c, v);
      const dismissed = WITHHELD.test(login.text)
        ? await dismissWithheld(c)
        : await awaitAndDismiss(c);
      assert.ok(dismissed);
      await assertSettled(c);
    });
  }

  await t.step(
    "a popup's own alert: the popup's tab becomes current once the signed-in tab closes",
    async () => {
      await using c = await w.connect();
      const login = await signIn(w, c, "popup");
      assert.match(login.text, /login: LOGIN_SUBMITTED/, login.text);
      const closed = await c.call("browser_close");
      assert.match(closed.text, /^closed the current tab/, closed.text);
      // The tab the next call acts on waits on its dialog: every call is answered at once,
      // never hung. The popup alerts on load, which under load may come after the first call.
      let snap: CallOutcome | undefined;
      for (let i = 0; i < 50 && !(snap && WITHHELD.test(snap.text)); i++) {
        if (snap) await new Promise((res) => setTimeout(res, 100));
        // "At once": a call the dialog held would wait on its renderer; the bound is a
        // loaded machine's (tests/helpers/until.ts).
        const t0 = performance.now();
        snap = await c.call("browser_snapshot");
        assert.ok(performance.now() - t0 < ANSWER_BOUND_MS, `took ${performance.now() - t0} ms`);
        if (!WITHHELD.test(snap.text)) {
          assert.match(snap.text, /^\s*status only: this session is tainted/, snap.text);
        }
      }
      // Reported as the call's refusal, or (when it opened during the call) as the call's
      // notice; either way without its text, and every later call is refused until dismissed.
      assert.match(snap!.text, WITHHELD, snap!.text);
      await dismissWithheld(c);
      await assertSettled(c);
    },
  );

  await t.step("an alert a popup opens as browser_close closes the signed-in tab", async () => {
    await using c = await w.connect();
    const login = await signIn(w, c, "close");
    assert.match(login.text, /login: LOGIN_SUBMITTED/, login.text);
    const closed = await c.call("browser_close");
    assert.doesNotMatch(closed.text, /^error/, closed.text);
    if (WITHHELD.test(closed.text)) await dismissWithheld(c);
    else await awaitAndDismiss(c);
    await assertSettled(c);
  });

  // The same world serves the loop: its notice is asked of this session's answers only.
  await t.step(
    "runTool() in a tainted session: a dialog loop's notice names the tab to go on in, not its path",
    async () => {
      await using c = await w.connect();
      const login = await signIn(w, c, "loop");
      assert.match(login.text, /login: LOGIN_SUBMITTED/, login.text);
      let all = "";
      for (let i = 0; i < 20 && !/dialog loop/.test(all); i++) {
        const r = await c.call("browser_snapshot");
        all += r.text + "\n";
        if (WITHHELD.test(r.text)) {
          all += (await c.call("browser_handle_dialog", { accept: false })).text + "\n";
        } else await new Promise((res) => setTimeout(res, 200));
      }
      // The popup (whose path carries the marker) is where the agent goes on: said as a notice, or
      // as the DIALOG_LOOP error of the answer that met the loop (then in its parentheses).
      assert.match(all, /the runtime closed it \(dialog loop\)\. Go on in tab 0\.\)?$/m, all);
    },
  );

  assertNothingShown(w.outputs(), "a tool result");
});

Deno.test("runTool() shows a dialog's text in a session the policy leaves untainted (the fixture's control)", async () => {
  await using w = await world("taint_after_login: none\n");
  const c = await w.connect();
  await signIn(w, c, "prompt");
  let shown = "";
  for (let i = 0; i < 50 && !/dialog open: prompt/.test(shown); i++) {
    shown = (await c.call("browser_snapshot")).text;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.match(shown, new RegExp(`message: "${MARKER}"`));
  assert.match(shown, new RegExp(`default: "${DEFAULT_MARKER}"`));
  const ok = await c.call("browser_handle_dialog", { accept: true, promptText: "hello" });
  assert.match(ok.text, /accepted the prompt dialog with 5 characters/);
  await eventuallyAnswered(w, "prompt=text");
});

Deno.test("renderWithheldDialog() names the tab and the dismissal, nothing of the page", () => {
  const line = renderWithheldDialog(2);
  assert.equal(
    line,
    'dialog open on tab 2; its text is not shown: this session is tainted (a credential was used). Dismiss it with browser_handle_dialog {"accept": false}',
  );
  assert.doesNotMatch(line, /alert|confirm|prompt|beforeunload|message|untrusted/);
});
