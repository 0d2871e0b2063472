import assert from "node:assert/strict";
import { PLANTED } from "./fixtures/site.ts";
import { crossFrameText, eventually, refOf, startHarness } from "./helpers/harness.ts";

/** The document a one-tab view shows (its `doc dN` line). */
function docOf(view: string): string {
  const m = view.match(/\ndoc (d\d+)\n/);
  assert.ok(m, `no doc line in:\n${view}`);
  return m[1];
}

// One runtime and one agent session (one browser) for every case: each case is a tool's
// behaviour on a page it navigates to itself, and a browser launch per case cost more than
// all the cases together. What a session keeps from case to case is handled where it could
// matter: the back-history case runs first (a fresh tab's history), every later case starts
// from a page of the other origin (see `step`), the unknown-ref case runs
// before the huge page hands out refs past e999, the popup case closes its tab, document ids
// and the fixture site's hit counts are read relative to the case's own calls, and the
// password case (which needs `model_may_type_passwords`, a policy line no other case
// touches) checks every output of its own calls. Each case is a step: a failure is reported
// as its own.
Deno.test("browser tools on the fixture site, one session", async (t) => {
  // The policy a sign-up flow has (see the password case); no other case types a password.
  await using h = await startHarness((site) =>
    `allowed_origins: [${site.origin}, ${site.otherOrigin}]\nread_only: false\nmodel_may_type_passwords: true\n`
  );
  await using c = await h.connect();
  // A new document's view folds the lines its tab's last whole view of the same origin
  // showed: each case after the first starts from a page of the other origin, so it is shown
  // its pages as a fresh session would show them.
  const step = (name: string, fn: () => Promise<void>) =>
    t.step(name, async () => {
      const away = await c.call("browser_navigate", { url: `${h.site.otherOrigin}/next` });
      assert.equal(away.isError, false, away.text);
      await fn();
    });

  await t.step("browser_click follows a link and browser_navigate_back returns", async () => {
    const plain = await c.call("browser_navigate", { url: `${h.site.origin}/plain` });
    const next = await c.call("browser_click", {
      ref: refOf(plain.text, /"Next page" ->/),
      element: "Next",
    });
    assert.equal(next.isError, false, next.text);
    assert.match(next.text, /clicked e\d+; a new page loaded/);
    assert.match(next.text, /# Next page/);
    const back = await c.call("browser_navigate_back");
    assert.equal(back.isError, false, back.text);
    assert.match(back.text, /went back/);
    assert.match(back.text, /# Fixture plain/);
    const none = await c.call("browser_navigate_back");
    assert.match(none.text, /error: NO_HISTORY/);
  });

  await step(
    "browser_navigate returns an outline with text, controls and both iframes",
    async () => {
      const r = await c.call("browser_navigate", { url: `${h.site.origin}/` });
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, /^navigated to http:\/\/127\.0\.0\.1:\d+/);
      assert.match(r.text, /# Fixture home/);
      assert.match(r.text, /\[e\d+\] "Next page" -> \/next\n/);
      assert.doesNotMatch(r.text, /s3cr3t/, "link queries are not shown");
      assert.match(r.text, /\[e\d+\] textbox "User" = "alice"/);
      assert.match(r.text, /\[e\d+\] password "Password"\n/);
      assert.match(
        r.text,
        /\[e\d+\] combobox "Size" = "Medium" options: "Small", "Medium", "Large"/,
      );
      assert.match(r.text, /\[e\d+\] checkbox "I agree"/);
      assert.match(r.text, /Frame text from 127\.0\.0\.1/);
      assert.match(
        r.text,
        /Frame text from 127\.0\.0\.2/,
        "out-of-process iframe content is included",
      );
      assert.match(r.text, /\[frame http:\/\/127\.0\.0\.2:\d+\/frame\]/);
      assert.match(
        r.text,
        /<<<untrusted-page nonce=[0-9a-f]{16} origin=http:\/\/127\.0\.0\.1:\d+>>>/,
      );
      assert.match(
        r.text,
        /\ndoc d\d+\n/,
        "a one-page view of the only tab names no page and no tab",
      );
    },
  );

  await step(
    "bad arguments and unknown refs get clear errors and the session keeps working",
    async () => {
      const cases: [string, Record<string, unknown>, RegExp][] = [
        ["browser_navigate", {}, /error: INVALID_ARGUMENTS \(browser_navigate: url: /],
        ["browser_navigate", { url: 42 }, /INVALID_ARGUMENTS/],
        ["browser_navigate", { url: "not a url" }, /INVALID_ARGUMENTS.*not an absolute URL/],
        ["browser_navigate", { url: "http://x.test", extra: 1 }, /INVALID_ARGUMENTS.*extra/],
        ["browser_click", { ref: "e999" }, /error: UNKNOWN_REF/],
        ["browser_click", { ref: "'; drop table" }, /error: UNKNOWN_REF/],
        ["browser_snapshot", { max_tokens: -5 }, /INVALID_ARGUMENTS/],
        ["browser_tabs", { action: "explode" }, /INVALID_ARGUMENTS/],
        ["browser_press_key", { key: "Hyper+Q" }, /INVALID_ARGUMENTS.*modifier/],
        ["browser_wait_for", {}, /INVALID_ARGUMENTS/],
        ["browser_evaluate", { function: "() => document.cookie" }, /UNKNOWN_TOOL/],
      ];
      for (const [tool, args, expected] of cases) {
        const r = await c.call(tool, args);
        assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)}`);
        assert.match(r.text, expected, `${tool} ${JSON.stringify(args)}: ${r.text}`);
      }
      const ok = await c.call("browser_navigate", { url: `${h.site.origin}/next` });
      assert.equal(ok.isError, false, ok.text);
    },
  );

  await step("browser_type with submit sends the form and the result page shows it", async () => {
    const plain = await c.call("browser_navigate", { url: `${h.site.origin}/plain` });
    const r = await c.call("browser_type", {
      ref: refOf(plain.text, /textbox "Query"/),
      text: "lanterns & stoves",
      submit: true,
    });
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /typed into e\d+ and pressed Enter; a new page loaded/);
    assert.match(r.text, /You searched for: lanterns & stoves/);
    assert.ok(h.site.hits.includes("GET /search?q=lanterns+%26+stoves"), h.site.hits.join("\n"));
  });

  await step("browser_select_option changes a select and page scripts see it", async () => {
    const plain = await c.call("browser_navigate", { url: `${h.site.origin}/plain` });
    const size = refOf(plain.text, /combobox "Size"/);
    const r = await c.call("browser_select_option", { ref: size, values: ["Large"] });
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /selected 1 option\(s\) in e\d+/);
    assert.match(r.text, /combobox "Size" = "Large"/);
    assert.match(r.text, /size is l/);
    const bad = await c.call("browser_select_option", { ref: size, values: ["Huge"] });
    assert.match(bad.text, /error: NO_SUCH_OPTION/);
    const notSelect = await c.call("browser_select_option", {
      ref: refOf(plain.text, /"Next page" ->/),
      values: ["x"],
    });
    assert.match(notSelect.text, /error: NOT_A_SELECT/);
  });

  await step(
    "browser_click checks a checkbox and clicks inside an out-of-process iframe",
    async () => {
      const home = await c.call("browser_navigate", { url: `${h.site.origin}/` });
      const checked = await c.call("browser_click", {
        ref: refOf(home.text, /checkbox "I agree"/),
      });
      assert.match(checked.text, /checkbox "I agree" \[checked\]/);
      const frameButton = refOf(crossFrameText(home.text), /button "Frame button"/);
      const r = await c.call("browser_click", { ref: frameButton });
      assert.equal(r.isError, false, r.text);
      assert.match(crossFrameText(r.text), /button "Frame clicked"/);
    },
  );

  await step("a popup opens as a new tab that browser_tabs lists and selects", async () => {
    const plain = await c.call("browser_navigate", { url: `${h.site.origin}/plain` });
    const r = await c.call("browser_click", { ref: refOf(plain.text, /"Open popup" ->/) });
    assert.equal(r.isError, false, r.text);
    assert.match(r.text, /notice: a new tab opened as tab 1/);
    // The popup loads on its own; until its title arrives the list shows its URL.
    let list = await c.call("browser_tabs", { action: "list" });
    await eventually(async () => {
      list = await c.call("browser_tabs", { action: "list" });
      return /1: "Popup"/.test(list.text);
    });
    assert.match(list.text, /2 tab\(s\)/);
    assert.match(list.text, /0: \[current\] "Fixture plain"/);
    assert.match(list.text, /1: "Popup" http:\/\/127\.0\.0\.1:\d+\/popup/);
    const sel = await c.call("browser_tabs", { action: "select", index: 1 });
    assert.match(sel.text, /# Popup page/);
    assert.match(sel.text, /tab 1 of 2/);
    const closed = await c.call("browser_tabs", { action: "close", index: 1 });
    assert.match(closed.text, /1 tab\(s\)/);
    const snap = await c.call("browser_snapshot");
    assert.match(snap.text, /# Fixture plain/);
    const missing = await c.call("browser_tabs", { action: "select", index: 7 });
    assert.match(missing.text, /error: NO_SUCH_TAB/);
  });

  await step("a ref from an older document is refused with STALE_REF", async () => {
    const plain = await c.call("browser_navigate", { url: `${h.site.origin}/plain` });
    const next = refOf(plain.text, /"Next page" ->/);
    const nextPage = await c.call("browser_navigate", { url: `${h.site.origin}/next` });
    const [homeDoc, nextDoc] = [docOf(plain.text), docOf(nextPage.text)];
    assert.notEqual(homeDoc, nextDoc);
    const nexts = h.site.hits.filter((x) => x.startsWith("GET /next")).length;
    const r = await c.call("browser_click", { ref: next });
    assert.equal(r.isError, true);
    assert.match(
      r.text,
      new RegExp(
        `^error: STALE_REF \\(ref ${next} belongs to document ${homeDoc}, but the tab now shows ${nextDoc}\\b`,
      ),
    );
    assert.equal(
      h.site.hits.filter((x) => x.startsWith("GET /next")).length,
      nexts,
      "nothing was clicked",
    );
    // Reloading the same URL is a new document too, but an element the agent was shown that
    // reads the same on the new one keeps its ref (docs/snapshot.md "Refs that carry over"):
    // the view names it, and the click goes to the new document's element.
    const again = await c.call("browser_navigate", { url: `${h.site.origin}/next` });
    const back = refOf(again.text, /"Back home" ->/);
    const reloaded = await c.call("browser_navigate", { url: `${h.site.origin}/next` });
    assert.match(reloaded.text, new RegExp(`\\b${back}\\b`), "the new view names the carried ref");
    const homes = h.site.hits.filter((x) => x === "GET /").length;
    assert.doesNotMatch((await c.call("browser_click", { ref: back })).text, /STALE_REF|error/);
    assert.equal(h.site.hits.filter((x) => x === "GET /").length, homes + 1);
  });

  await step("no tool runs page script or reads raw HTML; hints are honest", async () => {
    const { tools } = await c.client.listTools();
    const names = tools.map((t) => t.name).sort();
    assert.deepEqual(names, [
      "ask_human",
      "browser_capture_credentials",
      "browser_click",
      "browser_close",
      "browser_console_messages",
      "browser_drag",
      "browser_file_upload",
      "browser_fill_form",
      "browser_find",
      "browser_handle_dialog",
      "browser_hover",
      "browser_login",
      "browser_navigate",
      "browser_navigate_back",
      "browser_network_requests",
      "browser_press_key",
      "browser_resize",
      "browser_select_option",
      "browser_snapshot",
      "browser_tabs",
      "browser_take_screenshot",
      "browser_type",
      "browser_wait_for",
    ]);
    // Never: a tool that runs page script, reads raw HTML or installs a browser.
    for (const absent of ["browser_evaluate", "browser_run_code", "browser_install"]) {
      assert.ok(!names.includes(absent), absent);
    }
    const hint = (n: string) => tools.find((t) => t.name === n)!.annotations!;
    assert.equal(hint("browser_snapshot").readOnlyHint, true);
    assert.equal(hint("browser_find").readOnlyHint, true);
    assert.equal(hint("browser_wait_for").readOnlyHint, true);
    assert.equal(hint("browser_console_messages").readOnlyHint, true);
    assert.equal(hint("browser_network_requests").readOnlyHint, true);
    for (
      const n of ["browser_click", "browser_type", "browser_select_option", "browser_press_key"]
    ) {
      assert.equal(hint(n).readOnlyHint, false, n);
      assert.equal(hint(n).destructiveHint, true, n);
    }
  });

  await step("browser_press_key and browser_wait_for drive a page", async () => {
    const plain = await c.call("browser_navigate", { url: `${h.site.origin}/plain` });
    await c.call("browser_type", { ref: refOf(plain.text, /textbox "Query"/), text: "keys" });
    const r = await c.call("browser_press_key", { key: "Enter" });
    assert.match(r.text, /pressed Enter; a new page loaded/);
    assert.match(r.text, /You searched for: keys/);
    await c.call("browser_navigate", { url: `${h.site.origin}/slow-text` });
    const w = await c.call("browser_wait_for", { text: "ready now" });
    assert.equal(w.isError, false, w.text);
    assert.match(w.text, /the text appeared/);
    const gone = await c.call("browser_wait_for", { textGone: "loading" });
    assert.match(gone.text, /the text is gone/);
  });

  await step("a covered element is not clicked (CLICK_INTERCEPTED)", async () => {
    const page = await c.call("browser_navigate", { url: `${h.site.origin}/overlay` });
    const r = await c.call("browser_click", { ref: refOf(page.text, /button "Hidden target"/) });
    assert.match(r.text, /error: CLICK_INTERCEPTED/);
    // Nothing was clicked: the page the agent saw is unchanged.
    assert.match(
      r.text,
      new RegExp(`no changes since your last view \\(doc ${docOf(page.text)}\\)`),
    );
  });

  await step(
    "a click far down a scrolled page lands; an overlay there is still caught",
    async () => {
      const page = await c.call("browser_navigate", { url: `${h.site.origin}/scrolled` });
      const r = await c.call("browser_click", { ref: refOf(page.text, /button "Far down"/) });
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, /far button clicked/);
      const covered = await c.call("browser_navigate", {
        url: `${h.site.origin}/scrolled-overlay`,
      });
      const hit = await c.call("browser_click", {
        ref: refOf(covered.text, /button "Far target"/),
      });
      assert.match(hit.text, /^error: CLICK_INTERCEPTED/);
      const tabs = await c.call("browser_tabs", { action: "list" });
      assert.match(tabs.text, /"Overlay far"/, "neither the target nor the overlay got the click");
    },
  );

  await step("page text cannot forge the end of the untrusted block", async () => {
    const r = await c.call("browser_navigate", { url: `${h.site.origin}/forged` });
    assert.equal(r.text.match(/<<<end-untrusted-page/g)?.length, 1);
    const nonce = r.text.match(/nonce=([0-9a-f]{16})/)![1];
    assert.ok(r.text.trimEnd().endsWith(`<<<end-untrusted-page nonce=${nonce}>>>`));
  });

  await step(
    "visible controls under aria-hidden are listed and clickable; invisible ones are not",
    async () => {
      const page = await c.call("browser_navigate", { url: `${h.site.origin}/hidden-nav` });
      assert.match(page.text, /\[e\d+\] "Hidden nav link" -> \/next/);
      assert.match(page.text, /\[e\d+\] button "Close"/);
      assert.doesNotMatch(page.text, /Invisible link/);
      const r = await c.call("browser_click", { ref: refOf(page.text, /"Hidden nav link" ->/) });
      assert.match(r.text, /# Next page/);
    },
  );

  await step(
    "element arguments take Playwright MCP 0.0.83's `target` name as well as `ref`",
    async () => {
      const plain = await c.call("browser_navigate", { url: `${h.site.origin}/plain` });
      const link = refOf(plain.text, /"Next page" ->/);
      const r = await c.call("browser_click", { target: link, element: "Next page link" });
      assert.equal(r.isError, false, r.text);
      assert.match(r.text, /path: \/next/);
      const both = await c.call("browser_click", { target: link, ref: link });
      assert.match(both.text, /^error: INVALID_ARGUMENTS/);
    },
  );

  await step("huge pages are paged and every link is reachable through the pages", async () => {
    const first = await c.call("browser_navigate", { url: `${h.site.origin}/big` });
    const m = first.text.match(/page 1\/(\d+)/);
    assert.ok(m && Number(m[1]) > 1, "the first page says more exist");
    assert.ok(first.text.length < 26_000, `first page is ${first.text.length} chars`);
    const pages = Number(m![1]);
    let all = first.text;
    for (let p = 2; p <= pages; p++) {
      all += (await c.call("browser_snapshot", { page: p })).text;
    }
    for (let i = 0; i < 1500; i++) assert.ok(all.includes(`"Item number ${i}" ->`), `item ${i}`);
  });

  await step("password values never appear in any tool result", async () => {
    // The file's policy is a sign-up flow's: the model may type a password (PASSWORD_FIELD
    // otherwise). Every output of this case's calls is checked, the home page's prefilled
    // password included.
    const from = c.outputs.length;
    const logins = h.site.posts.get("/login")?.length ?? 0;
    const home = await c.call("browser_navigate", { url: `${h.site.origin}/` });
    const pw = refOf(home.text, /password "Password"/);
    const typed = await c.call("browser_type", { ref: pw, text: PLANTED.typedPassword });
    assert.match(typed.text, /\(password field\)/);
    await c.call("browser_snapshot", { max_tokens: 100_000 });
    await c.call("browser_wait_for", { text: "Fixture home" });
    await c.call("browser_tabs", { action: "list" });
    await c.call("browser_click", { ref: refOf(home.text, /button "Sign in"/) });
    const all = c.outputs.slice(from).join("\n");
    for (const secret of Object.values(PLANTED)) {
      assert.ok(!all.includes(secret), `planted value leaked: ${secret}`);
    }
    assert.ok(!all.includes("•"), "not even the masked length is shown");
    const body = new URLSearchParams(h.site.posts.get("/login")?.[logins] ?? "");
    assert.equal(
      body.get("pw"),
      PLANTED.typedPassword,
      "the typed value replaced the prefilled one",
    );
  });
});
