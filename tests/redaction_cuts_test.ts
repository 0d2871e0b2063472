/**
 * Redaction before any cut, on every path (issue 19): a stored secret planted so that each
 * place that shortens page text (a name cut, a line split, the overview, a diff, the tab
 * list, the console and network trims, notices, errors, progress) would cut it, and in
 * every form a page can give it (lower-cased by the browser in a host name, upper-cased,
 * letter-spaced, joined by invisible characters). No output may hold a run of 8 of its
 * characters (case-folded, separators ignored); where a cut is driven directly, not even a
 * run of 3 may be left at the cut.
 */
import assert from "node:assert/strict";
import type { Protocol } from "../cdp/mod.ts";
import { CdpLayerError } from "../cdp/mod.ts";
import { RefusedRequests } from "../runtime/browser/refused_notice.ts";
import { PageLog } from "../runtime/browser/page_log.ts";
import { NetworkLog } from "../runtime/browser/network_log.ts";
import { Notices } from "../runtime/browser/notices.ts";
import { translateBrowserError } from "../runtime/browser/translate_error.ts";
import { withProgress } from "../runtime/mcp/progress.ts";
import { processRedactor, REDACTED } from "../runtime/redact/mod.ts";
import { diffViews } from "../runtime/snapshot/diff.ts";
import { formatDiff } from "../runtime/snapshot/diff_format.ts";
import { buildDomOutline, type DomFrame } from "../runtime/snapshot/dom_outline.ts";
import { domPage } from "./helpers/dom_snapshot.ts";
import { buildAxOutline } from "../runtime/snapshot/ax_outline.ts";
import { ax, axFrame } from "./helpers/ax_tree.ts";
import { type PageView, renderPage } from "../runtime/snapshot/page_view.ts";
import { ResponseBuilder } from "../runtime/tools/response.ts";
import { tabLine } from "../runtime/tools/tabs.ts";
import { rawKeySource, Vault } from "../vault/mod.ts";
import { databasePath, openDatabase } from "../runtime/store/database.ts";
import { FakeHost, fakeTarget } from "./helpers/fake_target.ts";
import { keyedTransport, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { html, serveTwoOrigins } from "./fixtures/two_origins.ts";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";

/** A 24-character password of letters and digits: a host name can hold it. */
const PW = "Zk4Wq9Rt2Xm7Pv3Lh8Ns5Jd6";
/** Padding: none of these letters is in PW, so a run counts PW's characters only. */
const PAD = "o";
const NONCE = "0123456789abcdef";

// The vault fills the process redactor at start; the pure parts read the same instance.
processRedactor().add([PW]);

function fold(text: string): string {
  return text.normalize("NFKD").toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
}

/** The longest run of consecutive characters of PW (folded, either direction) in `text`. */
function longestRun(text: string, secret = PW): number {
  const t = fold(text);
  let best = 0;
  for (const s of [fold(secret), [...fold(secret)].reverse().join("")]) {
    for (let i = 0; i < s.length; i++) {
      for (let j = i + best + 1; j <= s.length && t.includes(s.slice(i, j)); j++) best = j - i;
    }
  }
  return best;
}

/** Asserts no run of more than `max` characters of PW in any of `texts`. */
function assertNoRun(texts: string | string[], where: string, max = 7): void {
  for (const text of typeof texts === "string" ? [texts] : texts) {
    const run = longestRun(text);
    assert.ok(run <= max, `${where}: a run of ${run} characters of the password in:\n${text}`);
  }
}

/** How many characters of PW a cut leaves: the counts a red team found, and short ones. */
const LEFT = [1, 3, 5, 7, 8, 12, 19, 20, 21, 22, 23];

// ---------------------------------------------------------------------------------------
// The accessibility outline.

let refSeq = 0;
const issue = () => `e${++refSeq}`;

/** `n` padding characters, then PW, then a tail: a cut at `n + left` leaves `left` of PW. */
const straddle = (n: number) => `${PAD.repeat(Math.max(n, 0))}${PW} tail`;

Deno.test("buildAxOutline() redacts a name, a value and a heading before their cuts", () => {
  for (const left of LEFT) {
    const tree = ax("RootWebArea", "T", [
      // A 120-character name cut leaves 119 characters and "…".
      ax("link", straddle(119 - left), [], { props: { url: "http://127.0.0.1:8000/x" } }),
      ax("button", straddle(119 - left)),
      ax("textbox", "Field", [], { value: { type: "string", value: straddle(119 - left) } }),
      ax("heading", straddle(999 - left), [], { props: { level: 2 } }),
      ax("combobox", "Pick", [ax("option", straddle(119 - left))]),
      // The overview's 60-character name cut leaves 59 characters and "…".
      ax("link", straddle(59 - left), [], { props: { url: "http://127.0.0.2:8000/y" } }),
      ax("button", straddle(59 - left)),
      // Not at a cut: shows the redactor is at work.
      ax("paragraph", "", [ax("StaticText", `plain ${PW}`)]),
    ]);
    const { lines, brief } = buildAxOutline(axFrame(tree), issue);
    assert.ok(lines.includes(`plain ${REDACTED}`), lines.join("\n"));
    for (const line of [...lines, ...brief]) assertNoRun(line, `left ${left}`, 2);
  }
});

Deno.test("buildAxOutline() redacts a text line before it is split and briefed", () => {
  for (const left of LEFT) {
    const tree = ax("RootWebArea", "T", [
      // A text line is split every 1,000 characters; its overview keeps 19 and "…".
      ax("paragraph", "", [ax("StaticText", straddle(1_000 - left))]),
      ax("paragraph", "", [ax("StaticText", straddle(19 - left))]),
      // Split across text runs: each run alone holds less than a run of 8.
      ax("paragraph", "", [
        ax("StaticText", PW.slice(0, 6)),
        ax("emphasis", "", [ax("StaticText", PW.slice(6, 12))]),
        ax("StaticText", PW.slice(12)),
      ]),
    ]);
    const { lines, brief } = buildAxOutline(axFrame(tree), issue);
    for (const line of [...lines, ...brief]) assertNoRun(line, `left ${left}`, 2);
  }
});

Deno.test("buildAxOutline() redacts page copies: upper-cased, letter-spaced, invisible-joined, in a host name", () => {
  const tree = ax("RootWebArea", "T", [
    ax("paragraph", "", [ax("StaticText", `Upper ${PW.toUpperCase()}`)]),
    ax("paragraph", "", [ax("StaticText", `Spaced ${[...PW].join(" ")}`)]),
    ax("paragraph", "", [ax("StaticText", `Dashed ${[...PW].join("-")}`)]),
    ax("paragraph", "", [ax("StaticText", `Hidden ${[...PW].join("\u200b")}`)]),
    ax("paragraph", "", [ax("StaticText", `Shy ${[...PW].join("\u00ad\u2066")}`)]),
    // The URL parser lower-cases the host: the page wrote it in any case.
    ax("link", "Host link", [], { props: { url: `http://${PW}.example.test/p` } }),
    ax("link", "Foreign", [], { props: { url: `http://a.${PW}.example.test/` } }),
  ]);
  const { lines, brief } = buildAxOutline(axFrame(tree), issue);
  assert.match(lines.join("\n"), /-> http:\/\/\[redacted\]\.example\.test\/p/);
  for (const line of [...lines, ...brief]) assertNoRun(line, "copy", 2);
});

// ---------------------------------------------------------------------------------------
// The fast-mode outline (DOM snapshots).

/** One document: HTML > BODY > each element (block or inline-block) with its one text child. */
function liteFrame(
  body: { tag: string; attrs?: Record<string, string>; text?: string; inputValue?: string }[],
): DomFrame {
  return domPage(
    body.map((el) => ({
      tag: el.tag,
      attrs: el.attrs,
      inputValue: el.inputValue,
      display: ["P", "H2", "DIV"].includes(el.tag) ? "block" : "inline-block",
      kids: el.text !== undefined ? [el.text] : [],
    })),
    undefined,
    undefined,
    "T",
  );
}

Deno.test("buildDomOutline() redacts names, values, text, headings and link targets before cutting them", () => {
  for (const left of LEFT) {
    // A shown link target is cut at 1,000 characters: "http://127.0.0.1:8000/" is not
    // shown for a same-origin link, "/" is.
    const path = `/${PAD.repeat(999 - left - 1)}${PW}`;
    const frame = liteFrame([
      { tag: "A", attrs: { href: "/a" }, text: straddle(119 - left) },
      { tag: "A", attrs: { href: "/b", "aria-label": straddle(119 - left) }, text: "x" },
      { tag: "A", attrs: { href: path }, text: "Long target" },
      { tag: "A", attrs: { href: `http://${PW}.example.test/` }, text: "Host link" },
      { tag: "INPUT", attrs: { type: "text" }, inputValue: straddle(119 - left) },
      { tag: "P", text: straddle(1_000 - left) },
      { tag: "P", text: straddle(19 - left) },
      { tag: "H2", text: straddle(999 - left) },
      { tag: "P", text: `Spaced ${[...PW.toUpperCase()].join(" ")}` },
    ]);
    const { lines, brief } = buildDomOutline(frame, (_f, id) => `e${id}`);
    assert.ok(lines.some((l) => l.includes("Long target")), lines.join("\n"));
    for (const line of [...lines, ...brief]) assertNoRun(line, `lite, left ${left}`, 2);
  }
});

// ---------------------------------------------------------------------------------------
// Overview pages, the view's own strings, and diffs.

function view(lines: string[], extra: Partial<PageView> = {}): PageView {
  return {
    nonce: NONCE,
    origin: "http://127.0.0.1:8000",
    path: "/page",
    title: "T",
    docId: "d1",
    tabIndex: 0,
    tabCount: 1,
    lines,
    ...extra,
  };
}

Deno.test("renderPage() overview pages cut lines redacted at the outline; title, path and origin are redacted", () => {
  for (const left of LEFT) {
    const filler = Array.from({ length: 120 }, (_, i) =>
      ax("paragraph", "", [
        ax("StaticText", `Filler paragraph number ${i} with enough words to count`),
      ]));
    const tree = ax("RootWebArea", "T", [
      ax("paragraph", "", [ax("StaticText", straddle(19 - left))]),
      ...filler,
    ]);
    const { lines, brief } = buildAxOutline(axFrame(tree), issue);
    const v = view(lines, {
      brief,
      title: `Title ${PW.toUpperCase()}`,
      path: `/${PW.toLowerCase()}`,
      origin: `http://${PW.toLowerCase()}.localhost:8000`,
    });
    const first = renderPage(v, 1, 2_000);
    assert.match(first.text, /overview/);
    assertNoRun(first.text, `overview, left ${left}`, 2);
    for (let p = 2; p <= first.pages; p++) assertNoRun(renderPage(v, p, 2_000).text, "page", 2);
  }
});

Deno.test("formatDiff() redacts removed and context lines before it shortens them", () => {
  for (const left of LEFT) {
    // Lines as a view built before the value was known would hold them.
    const heading = `# ${PAD.repeat(79 - 2 - left)}${PW} more`;
    const removed = straddle(19 - left);
    const before = view([heading, "alpha", removed, "omega"]);
    const after = view([heading, "alpha", "omega"], {
      title: `New ${[...PW].join(".")}`,
      path: `/${PW}`,
    });
    const diff = diffViews(before, after);
    assert.ok(diff);
    const text = formatDiff(diff, after);
    assert.match(text, /^- /m);
    assertNoRun(text.split("\n"), `diff, left ${left}`, 2);
  }
});

// ---------------------------------------------------------------------------------------
// The tab list, console, network, notices, errors, progress and the serializer.

Deno.test("tabLine() redacts a title before its 200-character cut and a host name holding the password", () => {
  for (const left of LEFT) {
    const line = tabLine({
      index: 0,
      current: true,
      title: straddle(199 - left),
      url: `http://${PW.toUpperCase()}.example.test/${PW}`,
    });
    assertNoRun(line, `tab, left ${left}`, 2);
  }
});

function consolePage() {
  const log = new PageLog();
  const host = new FakeHost();
  const { target, session } = fakeTarget(host, "page", "tab-1");
  log.watch(target);
  return { log, session };
}

Deno.test("PageLog.render() redacts a message, a script URL and a function name before their trims", () => {
  for (const left of LEFT) {
    const { log, session } = consolePage();
    const url = `http://127.0.0.1:8000/${PAD.repeat(199 - 22 - left)}${PW}.js`;
    const frame = {
      functionName: straddle(99 - left),
      scriptId: "1",
      url,
      lineNumber: 1,
      columnNumber: 1,
    };
    const call = (text: string, type: Protocol.Runtime.ConsoleAPICalledEvent["type"] = "log") =>
      session.dispatch("Runtime.consoleAPICalled", {
        type,
        args: [{ type: "string", value: text }],
        executionContextId: 1,
        timestamp: 1,
        stackTrace: { callFrames: [frame] },
      });
    call(straddle(499 - left));
    call(`${PW.slice(0, 9)}\n${PW.slice(9)}`);
    call(`%s and ${[...PW].join(" ")}`, "trace");
    session.dispatch("Log.entryAdded", {
      entry: { source: "network", level: "error", text: straddle(499 - left), timestamp: 1, url },
    });
    const text = log.render("tab-1", { level: "debug" }, NONCE);
    assert.match(text, /\[LOG\]/);
    assertNoRun(text.split("\n"), `console, left ${left}`, 2);
  }
});

Deno.test("NetworkLog.render() redacts a URL, a status text and a failure before their trims", () => {
  for (const left of LEFT) {
    const log = new NetworkLog();
    const host = new FakeHost();
    const { target, session } = fakeTarget(host, "page", "tab-1");
    log.watch(target);
    const request = (id: string, url: string) =>
      session.dispatch("Network.requestWillBeSent", {
        requestId: id,
        loaderId: "L",
        documentURL: "http://127.0.0.1:8000/",
        request: {
          url,
          method: "GET",
          headers: {},
          initialPriority: "High",
          referrerPolicy: "no-referrer",
        },
        timestamp: 1,
        wallTime: 1,
        initiator: { type: "script" },
        redirectHasExtraInfo: false,
        type: "Fetch",
      });
    // The shown URL is cut at 200 characters; the query (holding PW too) is never shown.
    request("1", `http://127.0.0.1:8000/${PAD.repeat(199 - 22 - left)}${PW}?q=${PW}`);
    request("2", `http://${PW.toUpperCase()}.example.test/x?${PW}`);
    request("3", "http://127.0.0.1:8000/status");
    session.dispatch("Network.responseReceived", {
      requestId: "3",
      loaderId: "L",
      timestamp: 1,
      type: "Fetch",
      response: {
        url: "http://127.0.0.1:8000/status",
        status: 200,
        statusText: straddle(59 - left),
        headers: {},
        mimeType: "text/plain",
        charset: "",
        connectionReused: false,
        connectionId: 1,
        encodedDataLength: 0,
        securityState: "neutral",
      },
      hasExtraInfo: false,
    } as Protocol.Network.ResponseReceivedEvent);
    session.dispatch("Network.loadingFailed", {
      requestId: "2",
      timestamp: 1,
      type: "Fetch",
      errorText: straddle(79 - left),
    });
    const text = log.render("tab-1", {}, NONCE);
    assert.match(text, /\[GET\]/);
    assertNoRun(text.split("\n"), `network, left ${left}`, 2);
  }
});

Deno.test("RefusedRequests.take() and Notices.take() redact an origin holding the password", () => {
  const refused = new RefusedRequests();
  refused.add({ method: "GET", origin: `http://${PW.toLowerCase()}.example.test`, reason: "R" });
  refused.add({ method: "POST", origin: `http://x${PW.slice(0, 9)}.test`, reason: "R" });
  const notice = refused.take();
  assert.ok(notice?.includes(REDACTED), notice);
  const notices = new Notices();
  notices.push(notice!);
  notices.push(`page said ${[...PW].join("\u200d")}`);
  assertNoRun(notices.take(), "notices", 2);
});

Deno.test("translateBrowserError() and ResponseBuilder.serialize() put no page text in an error", () => {
  const cdp = new CdpLayerError("CDP_PROTOCOL_ERROR", `Cannot find ${PW} in ${PW.toLowerCase()}`);
  const err = translateBrowserError(cdp, false) as Error;
  assertNoRun(err.message, "translated", 2);
  const response = new ResponseBuilder()
    .error("X", `quoted ${PW.toUpperCase()}`)
    .result(`result ${[...PW].join(" ")}`)
    .notice(`notice ${PW.slice(3, 15)}`)
    .snapshot(`snapshot ${[...PW].join("\u200b")}`);
  const text = response.serialize().content.map((c) => c.type === "text" ? c.text : "").join();
  assert.match(text, /error: X/);
  assertNoRun(text, "serialized", 2);
  const denied = new ResponseBuilder().denied("R", `detail ${PW.toLowerCase()}`).serialize();
  assertNoRun(denied.content[0].type === "text" ? denied.content[0].text : "", "denied", 2);
});

Deno.test("withProgress() sends no page text", async () => {
  const messages: string[] = [];
  await withProgress(
    1,
    (p) => {
      messages.push(p.message);
      return Promise.resolve();
    },
    () => new Promise((r) => setTimeout(r, 60)),
    10,
  );
  assert.ok(messages.length > 0);
  assertNoRun(messages, "progress", 2);
});

// ---------------------------------------------------------------------------------------
// End to end, in Chromium: the password planted in the vault, a hostile page showing it
// everywhere a cut falls.

const KEY = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));

/** The hostile page: every form and every cut at once (origin: the site's own). */
function hostilePage(origin: string): string {
  const spaced = [...PW].join(" ");
  const zw = [...PW].join("\u200b");
  // Name cut at 120 leaves 21; the line split at 1,000 leaves 13; the overview leaves 11.
  const longName = `${PAD.repeat(119 - 21)}${PW} tail`;
  const longLine = `${PAD.repeat(1_000 - 13)}${PW} tail`;
  const briefLine = `${PAD.repeat(19 - 11)}${PW} tail`;
  // Console trim at 500 leaves 12; the network URL trim at 200 leaves 10 (origin counted).
  const logged = `${PAD.repeat(499 - 12)}${PW} tail`;
  const fetched = `/api/${PAD.repeat(199 - origin.length - 5 - 10)}${PW}?q=${PW}`;
  const filler = Array.from({ length: 80 }, (_, i) => `<p>Filler paragraph ${i}, words.</p>`)
    .join("");
  const reversed = [...PW].reverse().join("");
  const wide = [...PW].map((c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join("");
  const marked = [...PW].map((c) => `${c}\u0332`).join("");
  return `<h1>Hostile</h1>
<a href="/next">${longName}</a>
<p id="upper">Upper ${PW.toUpperCase()}</p>
<p>Spaced ${spaced}</p>
<p>Joined ${zw}</p>
<p>${longLine}</p>
<p>${briefLine}</p>
<p id="gone">${PAD.repeat(19 - 9)}${PW} removed by the button</p>
<p>Reversed ${reversed}</p>
<p>Wide ${wide}</p>
<p>Marked ${marked}</p>
<p>Split <b>${PW.slice(0, 7)}</b><i>${PW.slice(7, 14)}</i>${PW.slice(14)}</p>
<h2>${PAD.repeat(999 - 6)}${PW}</h2>
<label>Value <input value="${PAD.repeat(119 - 17)}${PW} tail"></label>
<label>Pick <select><option>${PAD.repeat(119 - 4)}${PW}</option></select></label>
<button aria-label="${PAD.repeat(119 - 22)}${PW.toLowerCase()}">Labelled</button>
<a href="/${PW.toLowerCase()}/deep">Path link</a>
<a href="http://${PW}.localhost:9/">Host link</a>
<button onclick="document.getElementById('gone').remove()">Remove it</button>
${filler}
<script>
  console.log(${JSON.stringify(logged)});
  console.error("split", ${JSON.stringify(PW.slice(0, 9))} + "\\n" + ${
    JSON.stringify(PW.slice(9))
  });
  fetch(${JSON.stringify(fetched)}).catch(() => {});
  fetch("http://" + ${JSON.stringify(PW)} + ".invalid/beacon").catch(() => {});
</script>`;
}

Deno.test("a session shows no run of 8 of a vault password, whatever the page does with it (Chromium)", async () => {
  await using site = serveTwoOrigins((origin) => ({
    "/hostile": () => html(hostilePage(origin), `${PAD.repeat(199 - 20)}${PW} title tail`),
    "/next": () => html("<p>next</p>", "Next"),
  }));
  // Under runs/: where the other runtime tests keep their data too.
  const dataDir = `runs/test-cuts-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(dataDir, { recursive: true });
  try {
    const db = openDatabase(databasePath(dataDir));
    {
      using vault = await Vault.open(db, rawKeySource(KEY));
      await vault.add("cuts-pass", "password", PW);
    }
    db.close();
    const runtime = await startTestRuntime(dataDir, `allowed_origins: [${site.origin}]\n`, {
      vaultKey: { key: KEY },
    });
    await using _rt = runtime;
    const { key } = await runtime.agents.add("cuts");
    const client = new Client({ name: "cuts-test", version: "0" });
    await client.connect(keyedTransport(runtime.url!, key));
    await using c = new TestClient(client);
    const nav = await c.call("browser_navigate", { url: `${site.origin}/hostile` });
    assert.equal(nav.isError, false, nav.text);
    assert.match(nav.text, /# Hostile/);
    const snap = await c.call("browser_snapshot", { max_tokens: 1_000 });
    assert.match(snap.text, /\[redacted\]/);
    assert.match(snap.text, /overview/, "the page is long enough for overview pages");
    const pages = Number(/page 1\/(\d+)/.exec(snap.text)?.[1] ?? "1");
    for (let p = 2; p <= pages; p++) {
      await c.call("browser_snapshot", { max_tokens: 1_000, page: p });
    }
    const button = /\[(e\d+)\] button "Remove it"/.exec(snap.text + nav.text)?.[1];
    assert.ok(button, "the button has a ref");
    const click = await c.call("browser_click", { ref: button });
    assert.equal(click.isError, false, click.text);
    const consoleOut = await c.call("browser_console_messages", { level: "debug" });
    assert.match(consoleOut.text, /\[LOG\]/, consoleOut.text);
    const network = await c.call("browser_network_requests", {});
    assert.match(network.text, /\/api\//, network.text);
    const tabs = await c.call("browser_tabs", { action: "list" });
    assert.match(tabs.text, /\[current\]/);
    // The next call carries the notice of the refused request to the password's host.
    await c.call("browser_snapshot");
    const all = c.outputs.join("\n");
    for (const text of c.outputs) assertNoRun(text, "an MCP result");
    assert.ok(longestRun(all) <= 7, "no run across results either");
    // The refused request to the password's host is audited with its (lower-cased) origin.
    const headers = { Authorization: `Bearer ${runtime.adminToken}` };
    const audit = await fetch(new URL("/api/audit", runtime.url), { headers });
    const rows = await audit.text();
    assert.equal(audit.status, 200);
    assert.match(rows, /\[redacted\]\.invalid/, "the refusal is audited, its host redacted");
    assertNoRun(rows, "the audit API");
    for (const file of [databasePath(dataDir), `${databasePath(dataDir)}-wal`]) {
      const bytes = await Deno.readFile(file).catch(() => new Uint8Array());
      assertNoRun(new TextDecoder("latin1").decode(bytes), file);
    }
  } finally {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});
