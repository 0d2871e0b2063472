/**
 * The one visibility rule (runtime/snapshot/visibility.ts, issue 37 item 1) in every view,
 * with real Chromium: for each way a page hides text, the outline (from the accessibility
 * tree, and from a DOM snapshot on a huge page), reading mode, `browser_find` and the diff
 * after a click that adds the same markup all show it, or all leave it out, as the rule says.
 * The control: the same page without its stylesheet and hiding attributes shows every word
 * in every view, so a view that lost text for another reason fails.
 *
 * And reading mode's refs bound once (item 3): a page that inserts links at the top every
 * millisecond while it is read never makes one link's line carry another element's ref.
 */
import assert from "node:assert/strict";
import type { BrowserSession } from "../runtime/browser/browser_session.ts";
import { callOnElement } from "../runtime/browser/element_ops.ts";
import { allowAllGate } from "../runtime/gate/gate.ts";
import { clickTool } from "../runtime/tools/element.ts";
import { findTool } from "../runtime/tools/find.ts";
import type { AnyTool } from "../runtime/tools/mod.ts";
import { navigateTool } from "../runtime/tools/navigate.ts";
import { runTool } from "../runtime/tools/pipeline.ts";
import { snapshotTool } from "../runtime/tools/snapshot.ts";
import { html, type Pages } from "./fixtures/two_origins.ts";
import { freshCase, openSharedSession, type SharedSession } from "./helpers/shared_session.ts";
import { OVERVIEW_SETTINGS } from "./helpers/harness.ts";

// ---- Harness --------------------------------------------------------------------------------

interface Rig extends AsyncDisposable {
  origin: string;
  session: BrowserSession;
  call(tool: AnyTool, args?: Record<string, unknown>): Promise<string>;
}

let current: SharedSession | undefined;

/**
 * A case's rig on the shared session: every tab an earlier case left is closed (its page,
 * a script still running in it, and the last view the next diff would compare with go with
 * it), and the site serves this case's `pages` alone.
 */
async function rig(pages: Pages): Promise<Rig> {
  const s = current;
  assert.ok(s, "a rig outside the test of the cases");
  const { session } = s;
  await freshCase(s, pages);
  return {
    origin: s.site.origin,
    session,
    async call(tool, args = {}) {
      const r = await runTool(tool, args, {
        session,
        gate: allowAllGate,
        settings: OVERVIEW_SETTINGS,
      });
      const text = r.content.map((c) => ("text" in c ? c.text : "") ?? "").join("\n");
      assert.notEqual(r.isError, true, text.slice(0, 2_000));
      return text;
    },
    // The session outlives the case: the next case's rig clears what this one left.
    async [Symbol.asyncDispose]() {},
  };
}

const cases: { name: string; fn: (t: Deno.TestContext) => Promise<void> }[] = [];

/**
 * Registers a case. The cases are independent and none tests isolation between sessions, so
 * they run as the steps of one test on one browser session (see the end of the file); each
 * reports on its own.
 */
function visibilityCase(name: string, fn: (t: Deno.TestContext) => Promise<void>): void {
  cases.push({ name, fn });
}

/** Every page of the full outline (the pages after the overview), as one text. */
async function fullOutline(r: Rig): Promise<string> {
  const first = await r.call(snapshotTool);
  const total = Number(first.match(/· page 1\/(\d+)/)?.[1] ?? 1);
  const pages = [first];
  for (let p = 2; p <= total; p++) pages.push(await r.call(snapshotTool, { page: p }));
  return pages.join("\n");
}

// ---- 1. The rule, per property, per view ----------------------------------------------------

/** A way of hiding text: its markup around `word`, and whether the rule shows the word. */
interface Case {
  name: string;
  word: string;
  markup: (word: string) => string;
  shown: boolean;
}

const CASES: Case[] = [
  {
    name: "display:none by a class",
    word: "zqDisplay",
    // A link too: reading mode must not list it either.
    markup: (w) => `<span class="dn">${w} <a href="/t/dn">${w}Link</a></span>`,
    shown: false,
  },
  {
    name: "visibility:hidden by a class",
    word: "zqVisibility",
    markup: (w) => `<span class="vh">${w} <a href="/t/vh">${w}Link</a></span>`,
    shown: false,
  },
  {
    name: "visibility:visible inside visibility:hidden",
    word: "zqVisibleAgain",
    markup: (w) => `<span class="vh">unseen words <span class="vv">${w}</span></span>`,
    shown: true,
  },
  {
    name: "content-visibility:hidden by a class",
    word: "zqContentVis",
    markup: (w) => `<span class="cv">${w}</span>`,
    shown: false,
  },
  {
    name: "the hidden attribute",
    word: "zqHiddenAttr",
    markup: (w) => `<span hidden>${w}</span>`,
    shown: false,
  },
  {
    name: "hidden=until-found",
    word: "zqUntilFound",
    markup: (w) => `<span class="ib" hidden="until-found">${w}</span>`,
    shown: false,
  },
  {
    name: "inert",
    word: "zqInert",
    markup: (w) => `<span inert>${w} <a href="/t/inert">${w}Link</a></span>`,
    shown: false,
  },
  {
    name: "aria-hidden",
    word: "zqAriaHidden",
    markup: (w) => `<span aria-hidden="true">${w}</span>`,
    shown: false,
  },
  {
    name: "a closed details element",
    word: "zqClosedDetails",
    markup: (w) => `<details class="ib"><summary>More</summary>${w}</details>`,
    shown: false,
  },
  {
    name: "a shadow host's unslotted child",
    word: "zqUnslotted",
    markup: (w) => `<span data-host>${w}</span>`,
    shown: false,
  },
  {
    name: "transparent",
    word: "zqTransparent",
    markup: (w) => `<span class="tr">${w}</span>`,
    shown: true,
  },
  {
    name: "zero size",
    word: "zqZeroSize",
    markup: (w) => `<span class="zs">${w}</span>`,
    shown: true,
  },
  {
    name: "clipped (the screen-reader-only pattern)",
    word: "zqClipped",
    markup: (w) => `<span class="sr">${w}</span>`,
    shown: true,
  },
  {
    name: "off-screen",
    word: "zqOffscreen",
    markup: (w) => `<span class="os">${w}</span>`,
    shown: true,
  },
];

const STYLE = `<style>
.dn { display: none } .vh { visibility: hidden } .vv { visibility: visible }
.cv { display: inline-block; content-visibility: hidden } .ib { display: inline-block }
.zs { display: inline-block; width: 0; height: 0; overflow: hidden }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
  clip-path: inset(50%); white-space: nowrap }
.os { position: absolute; left: -10000px } .tr { opacity: 0 }
</style>`;

/** The words of `phase` (`Now` on load, `Late` once the page's button added them). */
const words = (phase: string) => CASES.map((c) => `${c.markup(c.word + phase)} `).join("and ");

/** Prose around the cases, enough for Readability to take the page for an article. */
const filler = (n: number, tag: string) =>
  Array.from(
    { length: n },
    (_, i) =>
      `<p>Filler ${tag}${i}: the river keeps its own slow counsel through the valley, and the town along it keeps the old stone bridges that the floods spared; the mills below the weir turn slowly and the ferry still crosses twice a day in summer.</p>`,
  ).join("");

/** Markup without what hides: no classes, no hiding attributes (the control). */
const plain = (markup: string) =>
  markup.replace(/ (class|hidden|inert|aria-hidden|data-host)(="[^"]*")?/g, "")
    .replace(/<details><summary>More<\/summary>/g, "<span>").replace(/<\/details>/g, "</span>");

/** Nodes a huge page adds (hidden, empty): past the DOM-snapshot bound of 20,000. */
const PADDING = 21_000;

function casePage(url: URL): Response {
  const styled = url.searchParams.get("plain") === null;
  const late = `<p>Late prose about the valley bridges, ${words("Late")} and the end.</p>`;
  const body = `<article><h1>Bridges</h1>${filler(4, "f")}
<p>Alpha prose about the bridges of the valley, ${words("Now")} more prose about stone.</p>
${filler(4, "g")}<div id="late"></div>
<button onclick="reveal()">Add the late paragraph</button></article>
<script>
  // Shadow roots with no slot: their hosts' own children are not rendered.
  function hosts() {
    for (const h of document.querySelectorAll("[data-host]")) {
      if (!h.shadowRoot) h.attachShadow({ mode: "open" }).innerHTML = "<b>shadow words</b>";
    }
  }
  function reveal() {
    document.getElementById("late").innerHTML = ${JSON.stringify(styled ? late : plain(late))};
    hosts();
  }
  hosts();
</script>`;
  const pad = url.searchParams.get("huge") !== null
    ? `<div style="display:none">${"<b></b>".repeat(PADDING)}</div>`
    : "";
  return html((styled ? STYLE + body : plain(body)) + pad, "Bridges");
}

/** What each view showed of each case's word. */
async function views(r: Rig, path: string, huge: boolean) {
  await r.call(navigateTool, { url: `${r.origin}${path}` });
  const outline = await fullOutline(r);
  assert.equal(
    /large page \(over 20,000 nodes\) read from a DOM snapshot/.test(outline),
    huge,
    `precondition: the outline is read from ${huge ? "a DOM snapshot" : "the accessibility tree"}`,
  );
  const found = new Map<string, string>();
  for (const c of CASES) found.set(c.word, await r.call(findTool, { text: `${c.word}Now` }));
  const read = await r.call(snapshotTool, { mode: "read" });
  assert.match(read, /^doc d\d+ · read/m);
  const outline2 = await fullOutline(r); // the diff's base: the whole outline, just sent
  assert.match(outline2, /Alpha prose/);
  const button = /\[(e\d+)\] button "Add the late paragraph"/.exec(outline2)?.[1];
  assert.ok(button, outline2.slice(0, 2_000));
  const diff = await r.call(clickTool, { ref: button, element: "Add the late paragraph" });
  assert.match(diff, /changes since your last view/, "precondition: the click's result is a diff");
  assert.match(diff, /^\+ .*Late prose about the valley bridges/m);
  return { outline, found, read, diff };
}

function checkViews(got: Awaited<ReturnType<typeof views>>, shown: (c: Case) => boolean) {
  for (const c of CASES) {
    const now = `${c.word}Now`;
    const late = `${c.word}Late`;
    const say = (view: string) => `${c.name}: ${view} ${shown(c) ? "shows" : "leaves out"} it`;
    assert.equal(got.outline.includes(now), shown(c), say("the outline"));
    assert.equal(got.read.includes(now), shown(c), say("reading mode"));
    assert.equal(!/^no line matches/m.test(got.found.get(c.word)!), shown(c), say("browser_find"));
    // The lines found, inside the page's block (the result line quotes the search).
    const block = /<<<untrusted-page [^]*<<<end-untrusted-page/.exec(got.found.get(c.word)!)?.[0];
    assert.equal(block?.includes(now) ?? false, shown(c), say("browser_find's lines"));
    assert.equal(got.diff.includes(late), shown(c), say("the diff"));
  }
}

for (const huge of [false, true]) {
  const from = huge ? "a DOM snapshot (huge page)" : "the accessibility tree";
  visibilityCase(
    `the visibility rule: every view applies it alike, the outline read from ${from}`,
    async (t) => {
      await using r = await rig({ "/page": (req) => casePage(new URL(req.url)) });
      const q = huge ? "?huge" : "";
      await t.step(
        "control: without its stylesheet and attributes, every word in every view",
        async () => {
          checkViews(await views(r, `/page${q}${q ? "&" : "?"}plain`, huge), () => true);
        },
      );
      await t.step("each property: shown or left out as the rule says, in every view", async () => {
        checkViews(await views(r, `/page${q}`, huge), (c) => c.shown);
      });
    },
  );
}

// ---- 3. Refs bound once ---------------------------------------------------------------------

/** Links of the article, each with its own name and target. */
const ARTICLE_LINKS = 24;

/**
 * An article whose links each have their own name and target, and a script that, every
 * millisecond, inserts a link at the top of the page (and, past 100, takes them out again):
 * every link's place among the document's links changes all the time.
 */
const INSERTING = `<article><h1>Guides</h1>${filler(3, "f")}
<p>Start with <a href="/guide/safe">the safe guide</a> before anything else, it explains the
valley's bridges and their surveys in the plainest words the county's engineers could find.</p>
${
  Array.from(
    { length: ARTICLE_LINKS },
    (_, i) =>
      `<p>Paragraph ${i} on the bridges: see <a href="/guide/${i}">guide number ${i}</a> for the surveys, made by hand and checked twice before printing.</p>`,
  ).join("")
}<p>When you are done, <a href="/account/delete">Delete my account</a> removes everything.</p>
${filler(3, "g")}</article>
<script>
  let n = 0, adding = true;
  setInterval(() => {
    if (adding) {
      const a = document.createElement("a");
      a.href = "/inserted/" + (++n);
      a.textContent = "Inserted " + n;
      document.body.prepend(a);
      if (document.querySelectorAll("a.ins").length >= 100) adding = false;
      a.className = "ins";
    } else {
      const first = document.querySelector("a.ins");
      if (first) first.remove(); else adding = true;
    }
  }, 1);
</script>`;

visibilityCase(
  "reading mode binds each link line's ref once: a page inserting links every millisecond never lends one link's ref to another",
  async () => {
    await using r = await rig({ "/guides": () => html(INSERTING, "Guides") });
    await r.call(navigateTool, { url: `${r.origin}/guides` });
    let checked = 0;
    for (let read = 0; read < 6; read++) {
      const text = await r.call(snapshotTool, { mode: "read" });
      const lines = text.split("\n");
      const links = lines.flatMap((line, at) => {
        const m = /^\[(e\d+)\] "([^"]*)" -> (\S+)$/.exec(line);
        return m ? [{ at, ref: m[1], name: m[2], path: m[3] }] : [];
      });
      // Every link of the article has its line (none was lost to another element)...
      const names = links.map((l) => l.name);
      for (
        const name of ["the safe guide", "Delete my account", "guide number 0", "guide number 23"]
      ) {
        assert.ok(
          names.includes(name),
          `read ${read}: no line for "${name}":\n${text.slice(0, 3_000)}`,
        );
      }
      for (const link of links) {
        // ...right after the paragraph that holds its text...
        let para = link.at - 1;
        while (para > 0 && /^\[e\d+\] /.test(lines[para])) para--;
        assert.ok(
          lines[para].includes(link.name),
          `read ${read}: ${link.ref} "${link.name}" follows "${lines[para]}"`,
        );
        // ...and its ref is that very element.
        const el = await r.session.resolve(link.ref);
        const [content, href] = await callOnElement<[string, string]>(
          el,
          "function () { return [this.textContent, this.getAttribute('href')]; }",
        );
        assert.equal(
          `${content} -> ${href}`,
          `${link.name} -> ${link.path}`,
          `read ${read}: ${link.ref}`,
        );
        checked++;
      }
    }
    assert.ok(checked >= 6 * ARTICLE_LINKS, `${checked} refs checked`);
  },
);

Deno.test("the visibility rule and reading mode's refs: every case, on one browser session", async (t) => {
  await using s = await openSharedSession("omotai-visibility-");
  current = s;
  for (const c of cases) await t.step(c.name, c.fn);
  current = undefined;
});
