/**
 * Issue 37 item 6: an attacker's pass over every view, in Chromium over MCP, with the hostile
 * pages of `fixtures/view_attack_site.ts`. Each break it found is a test here (and a unit test
 * beside the module fixed); the attacks that held stay as tests too, so a change that opens
 * them again fails.
 *
 * Breaks: a select listed options people cannot pick (`hidden`, `display: none`, a hidden
 * `<optgroup>`); a control under `aria-hidden` carried the page's `role` attribute raw into its line
 * (a line break and a whole forged element line or notice in it); lines the escape rule let
 * through (invisible characters inside an opening past the first 40 it read, `ⓝotice:` read
 * as a bullet and `otice:`, `⎡e9999]`, small capitals, `a) [e9999] …`, `the text appeared`),
 * in the outline, the DOM-snapshot outline, reading mode, `browser_find` and the diff.
 *
 * Held: frames hidden by their owner element (`visibility: hidden`, closed `<details>`,
 * `inert`, same and cross origin); preformatted line breaks (LF, CR, U+2028, VT, FF), table
 * cells, text split across elements, links named like element lines; console messages with
 * `%c`/`%s`, errors and objects with line breaks; a prompt's message and default; a title of
 * invisible characters; request URLs with `%0A`; the tab list.
 */
import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { serveViewAttackSite, SLIPPED, UNSEEN } from "./fixtures/view_attack_site.ts";
import { agentTransport, refOf, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { forgedLines } from "./helpers/runtime_line_oracle.ts";

/** Lines of `text` that hold a slipped line unescaped at their start (after diff and list marks). */
function unescaped(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    const body = line.replace(/^(?:[-+~] | {2})*/, "");
    if (SLIPPED.some((s) => body.startsWith(s))) out.push(line);
  }
  return out;
}

/** Asserts no line of `text` is forged (the oracle) and every slipped line is escaped. */
function clean(what: string, text: string, nonce: string): void {
  assert.deepEqual(forgedLines(text, nonce).slice(0, 5), [], `${what}: forged line(s)`);
  assert.deepEqual(unescaped(text).slice(0, 5), [], `${what}: slipped line(s)`);
}

/** How many of the slipped lines `text` shows, escaped. */
function escapedCount(text: string): number {
  return SLIPPED.filter((s) => text.includes(`\\${s}`)).length;
}

Deno.test("view attack: no hostile page forges a runtime line or shows unseen text, in any view", async (t) => {
  await using site = serveViewAttackSite();
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-view-attack-" });
  try {
    await using runtime = await startTestRuntime(
      dataDir,
      `allowed_origins: [${site.origin}, ${site.otherOrigin}]\nread_only: false\n`,
    );
    const client = new Client({ name: "omotai-test", version: "0" });
    await client.connect(await agentTransport(runtime));
    await using agent = new TestClient(client);
    const open = async (path: string) => {
      const nav = await agent.call("browser_navigate", { url: `${site.origin}${path}` });
      assert.equal(nav.isError, false, nav.text.slice(0, 2_000));
      return nav.text;
    };
    const first = await open("/aria-role");
    const nonce = /<<<untrusted-page nonce=([0-9a-f]{16})/.exec(first)?.[1];
    assert.ok(nonce, first.slice(0, 2_000));

    await t.step("a control under aria-hidden shows a role word, never its role attribute", () => {
      clean("aria-role", first, nonce);
      assert.doesNotMatch(first, /^\[e9999\]|^notice: forged/m);
      // The controls are still listed, each on its one line, with its own role.
      for (const name of ["Pay", "Pay two"]) {
        assert.match(first, new RegExp(`^\\[e\\d+\\] button "${name}"$`, "m"), first);
      }
      // A role attribute's first token, as the accessibility tree reads one, when it is a role.
      assert.match(first, /^\[e\d+\] textbox "Three"$/m, first);
      assert.match(first, /^\[e\d+\] "Home" -> \/x$/m, first);
    });

    await t.step("slipped lines are escaped in the outline, find and the diff", async () => {
      const nav = await open("/slipped");
      clean("slipped navigate", nav, nonce);
      assert.equal(escapedCount(nav), SLIPPED.length, nav);
      const snap = await agent.call("browser_snapshot", {});
      clean("slipped snapshot", snap.text, nonce);
      const found = await agent.call("browser_find", { text: "forged" });
      assert.match(found.text, /^found /, found.text.slice(0, 500));
      clean("slipped find", found.text, nonce);
      assert.ok(escapedCount(found.text) >= 5, found.text);
      const clicked = await agent.call("browser_click", { ref: refOf(snap.text, /"More"/) });
      assert.equal(clicked.isError, false, clicked.text);
      assert.match(clicked.text, /changes since your last view/, clicked.text.slice(0, 500));
      clean("slipped diff", clicked.text, nonce);
      assert.equal(escapedCount(clicked.text), SLIPPED.length, clicked.text);
    });

    await t.step(
      "slipped lines are escaped in the page card: a new page and the diff after a click",
      async () => {
        const nav = await agent.call("browser_navigate", {
          url: `${site.origin}/slipped`,
          answer: "card",
        });
        assert.match(nav.text, /^doc d\d+ · new page · /m, nav.text);
        clean("slipped card", nav.text, nonce);
        const found = await agent.call("browser_find", { role: "button", name: "More" });
        clean("slipped find exact", found.text, nonce);
        const clicked = await agent.call("browser_click", {
          ref: refOf(found.text, /button "More"/),
          answer: "card",
        });
        assert.match(clicked.text, /changes since your last view/, clicked.text.slice(0, 500));
        clean("slipped card diff", clicked.text, nonce);
        assert.ok(escapedCount(clicked.text) >= 3, clicked.text);
      },
    );

    await t.step("slipped lines are escaped in a DOM-snapshot outline (a huge page)", async () => {
      const nav = await open("/slipped-huge");
      assert.match(nav, /read from a DOM snapshot/, nav.slice(0, 1_000));
      clean("huge navigate", nav, nonce);
      const snap = await agent.call("browser_snapshot", { page: 2 });
      clean("huge full page", snap.text, nonce);
      assert.equal(escapedCount(snap.text), SLIPPED.length, snap.text.slice(0, 3_000));
    });

    await t.step("slipped lines are escaped in reading mode", async () => {
      await open("/slipped-article");
      const read = await agent.call("browser_snapshot", { mode: "read" });
      assert.equal(read.isError, false, read.text);
      assert.match(read.text, /The river keeps/, read.text.slice(0, 1_000));
      clean("slipped read", read.text, nonce);
      assert.equal(escapedCount(read.text), SLIPPED.length, read.text);
      assert.ok(read.text.includes(`- \\${SLIPPED[0]}`), "list items escaped after their bullet");
    });

    await t.step("frames hidden by their owner element show nothing (held)", async () => {
      const nav = await open("/hidden-frames");
      const read = await agent.call("browser_snapshot", { mode: "read" });
      const found = await agent.call("browser_find", { text: "UNSEEN" });
      const snap = await agent.call("browser_snapshot", {});
      assert.match(snap.text, /Visible end/);
      for (
        const [what, text] of [["navigate", nav], ["snapshot", snap.text], ["read", read.text], [
          "find",
          found.text,
        ]]
      ) {
        for (const marker of Object.values(UNSEEN)) {
          assert.ok(!text.includes(marker), `${what} shows ${marker}:\n${text.slice(0, 2_000)}`);
        }
      }
    });

    await t.step("a select lists only the options people can pick", async () => {
      const nav = await open("/options");
      assert.match(nav, /combobox = "Green" options: "Green", "Orange"$/m, nav);
      assert.ok(!nav.includes(UNSEEN.hiddenOption), nav);
      // Read from a DOM snapshot, only the hidden attribute can tell (on the option or its
      // group): a stylesheet's display: none on an unrendered option is not in the snapshot.
      const huge = await open("/options-huge");
      assert.match(huge, /read from a DOM snapshot/, huge.slice(0, 1_000));
      const page = (await agent.call("browser_snapshot", { page: 2 })).text;
      assert.match(
        page,
        /options: "Green", "UNSEEN-HIDDEN-OPTION 2", "Orange"$/m,
        page.slice(0, 2_000),
      );
      assert.ok(
        !page.includes(`${UNSEEN.hiddenOption} 1`) && !page.includes(`${UNSEEN.hiddenOption} 3`),
      );
    });

    await t.step(
      "an article's line breaks, cells, text split across elements and links forge nothing",
      async () => {
        const nav = await open("/article");
        clean("article navigate", nav, nonce);
        const read = await agent.call("browser_snapshot", { mode: "read" });
        assert.match(read.text, /\\\[e9999\] button "Approve transfer"/, read.text);
        clean("article read", read.text, nonce);
        const found = await agent.call("browser_find", { text: "e9999" });
        clean("article find", found.text, nonce);
      },
    );

    await t.step(
      "console, network, a prompt, a new tab and the tab list forge nothing (held)",
      async () => {
        const nav = await open("/noisy");
        clean("noisy navigate", nav, nonce);
        const consoleText = await agent.call("browser_console_messages", {});
        assert.match(consoleText.text, /forged/, consoleText.text);
        clean("console", consoleText.text, nonce);
        const network = await agent.call("browser_network_requests", {});
        assert.match(network.text, /\/r\//, network.text);
        clean("network", network.text, nonce);
        const asked = await agent.call("browser_click", { ref: refOf(nav, /"Ask"/) });
        assert.match(asked.text, /dialog open/, asked.text);
        clean("prompt", asked.text, nonce);
        clean(
          "prompt answered",
          (await agent.call("browser_handle_dialog", { accept: true, promptText: "x" })).text,
          nonce,
        );
        const opened = await agent.call("browser_click", { ref: refOf(nav, /"Open"/) });
        assert.match(opened.text, /new tab/, opened.text);
        clean("new tab", opened.text, nonce);
        const tabs = await agent.call("browser_tabs", { action: "list" });
        assert.match(tabs.text, /2 tab/, tabs.text);
        clean("tabs", tabs.text, nonce);
      },
    );

    for (const out of agent.outputs) clean("any output", out, nonce);
  } finally {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});
