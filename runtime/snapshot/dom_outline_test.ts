import { holdsPiece, PLANTED_PW, plantedRedactor } from "../../tests/helpers/planted_secret.ts";
import assert from "node:assert/strict";
import { buildDomOutline, type DomFrame, domFrames, domTitle } from "./dom_outline.ts";
import {
  domPage as page,
  type El,
  SnapshotBuilder,
  URL0,
} from "../../tests/helpers/dom_snapshot.ts";
import { OUTLINE_LIMITS } from "./outline_writer.ts";

/** Refs numbered in issue order, recording which frame and node each was for. */
function issuer() {
  const issued: { ref: string; frame: string; backendNodeId: number }[] = [];
  const issue = (frame: DomFrame, backendNodeId: number) => {
    const ref = `e${issued.length + 1}`;
    issued.push({ ref, frame: frame.key, backendNodeId });
    return ref;
  };
  return { issued, issue };
}

const outline = (root: DomFrame) => buildDomOutline(root, issuer().issue);
const a = (href: string, text: string, attrs: Record<string, string> = {}): El => ({
  tag: "A",
  attrs: { href, ...attrs },
  kids: [text],
});

Deno.test("buildDomOutline() writes the accessibility outline's lines: headings, text, links", () => {
  const root = page([
    { tag: "H1", kids: ["Huge"] },
    a("/item/0", "Item 0"),
    " ",
    a("/item/1?token=s3cr3t#x", "Item 1"),
    " ",
    a("https://other.test/far/away?q=1", "Away"),
    {
      tag: "P",
      kids: ["Some ", { tag: "B", kids: ["bold"] }, " text and ", a("/in", "a link"), "."],
    },
    { tag: "DIV", kids: ["div one"] },
    { tag: "DIV", kids: ["div two"] },
    {
      tag: "UL",
      kids: [{ tag: "LI", kids: ["first"] }, { tag: "LI", kids: [a("/l2", "second")] }],
    },
    {
      tag: "TABLE",
      kids: [{ tag: "TR", kids: [{ tag: "TD", kids: ["a"] }, { tag: "TD", kids: ["b"] }] }],
    },
    { tag: "P", kids: ["line", { tag: "BR" }, "break"] },
    { tag: "P", kids: ["one ", { tag: "SPAN", kids: [" "] }, "  two"] },
    { tag: "H2", attrs: { "aria-level": "3" }, kids: ["Sub ", { tag: "SMALL", kids: ["part"] }] },
  ]);
  const { lines, brief, stats, truncated } = outline(root);
  assert.deepEqual(lines, [
    "# Huge",
    '[e1] "Item 0" -> /item/0',
    '[e2] "Item 1" -> /item/1',
    '[e3] "Away" -> https://other.test/far/away',
    "Some bold text and",
    '[e4] "a link" -> /in',
    "div one div two",
    "- first",
    '- [e5] "second" -> /l2',
    "a | b",
    "line",
    "break",
    "one two",
    "### Sub part",
  ]);
  assert.equal(brief[1], '[e1] "Item 0"', "the overview leaves same-origin paths out");
  assert.equal(
    brief[3],
    '[e3] "Away" -> https://other.test',
    "the overview names a foreign link's origin, no role word",
  );
  assert.equal(brief.length, lines.length);
  assert.deepEqual(stats, { interactive: 5, frames: 1 });
  assert.equal(truncated, false);
  assert.equal(domTitle(root), "Page title");
});

Deno.test("buildDomOutline() issues refs with each element's backend node id", () => {
  const root = page([a("/a", "A"), { tag: "BUTTON", kids: ["B"] }]);
  const { issued, issue } = issuer();
  buildDomOutline(root, issue);
  const ids = root.document.nodes.backendNodeId!;
  const names = root.document.nodes.nodeName!.map((n) => root.strings[n]);
  assert.deepEqual(issued, [
    { ref: "e1", frame: "F", backendNodeId: ids[names.indexOf("A")] },
    { ref: "e2", frame: "F", backendNodeId: ids[names.indexOf("BUTTON")] },
  ]);
});

Deno.test("buildDomOutline() never shows a password value, not even its length", () => {
  const secret = "hunter2-planted";
  const root = page([
    { tag: "LABEL", attrs: { for: "pw" }, kids: ["Secret"] },
    { tag: "INPUT", attrs: { id: "pw", type: "password", value: secret }, inputValue: secret },
    { tag: "INPUT", attrs: { type: " PassWord ", value: secret }, inputValue: secret },
    { tag: "INPUT", attrs: { type: "password", "aria-label": "Other" }, inputValue: secret },
  ]);
  const { lines, brief } = outline(root);
  // The label's own line only repeats the field's name: the field's line says it.
  assert.deepEqual(lines, [
    '[e1] password "Secret"',
    "[e2] password",
    '[e3] password "Other"',
  ]);
  for (const l of [...lines, ...brief]) {
    assert.ok(!l.includes(secret) && !l.includes("•") && !l.includes("="), l);
  }
});

Deno.test("buildDomOutline() lists controls with role, name, value and state", () => {
  const root = page([
    { tag: "LABEL", kids: ["User ", { tag: "INPUT", attrs: { value: "x" }, inputValue: "alice" }] },
    { tag: "INPUT", attrs: { type: "search", placeholder: "Search here" } },
    { tag: "TEXTAREA", attrs: { "aria-label": "Notes" }, textValue: "typed notes" },
    {
      tag: "SELECT",
      attrs: { "aria-label": "Size" },
      kids: [
        { tag: "OPTION", kids: ["Small"] },
        { tag: "OPTION", kids: ["Medium"], selected: true },
      ],
    },
    {
      tag: "SELECT",
      attrs: { "aria-label": "Multi", multiple: "" },
      kids: [
        { tag: "OPTION", kids: ["A"], selected: true },
        {
          tag: "OPTGROUP",
          kids: [{ tag: "OPTION", kids: ["B"] }, { tag: "OPTION", kids: ["C"], selected: true }],
        },
      ],
    },
    {
      tag: "LABEL",
      kids: [{ tag: "INPUT", attrs: { type: "checkbox" }, checked: true }, " I agree"],
    },
    { tag: "INPUT", attrs: { type: "radio", "aria-label": "rd" } },
    { tag: "INPUT", attrs: { type: "submit" } },
    { tag: "INPUT", attrs: { type: "button", value: "Go" } },
    { tag: "INPUT", attrs: { type: "range", "aria-label": "Vol" }, inputValue: "30" },
    { tag: "INPUT", attrs: { type: "hidden", value: "tok" } },
    { tag: "BUTTON", attrs: { disabled: "" }, kids: ["Off"] },
    { tag: "DIV", attrs: { role: "button", "aria-pressed": "true" }, kids: ["Toggle"] },
    { tag: "DIV", attrs: { role: "tab", "aria-selected": "true" }, kids: ["Tab A"] },
    { tag: "BUTTON", attrs: { "aria-expanded": "true", "aria-disabled": "true" }, kids: ["Menu"] },
    { tag: "A", attrs: { href: "/img" }, kids: [{ tag: "IMG", attrs: { alt: "Logo" } }] },
    { tag: "BUTTON", attrs: { title: "Close" }, kids: [{ tag: "svg" }] },
    { tag: "SPAN", attrs: { id: "lbl" }, kids: ["Named elsewhere"] },
    { tag: "BUTTON", attrs: { "aria-labelledby": "lbl" }, kids: ["x"] },
    {
      tag: "DIV",
      attrs: { contenteditable: "true" },
      kids: ["rich ", { tag: "B", kids: ["text"] }],
    },
    { tag: "A", kids: ["no href, just text"] },
  ]);
  // A text line that only repeats the next control's name is left out ("User", "Named
  // elsewhere"): the control's line says it.
  assert.deepEqual(outline(root).lines, [
    '[e1] textbox "User" = "alice"',
    '[e2] searchbox "Search here"',
    '[e3] textbox "Notes" = "typed notes"',
    '[e4] combobox "Size" = "Medium" options: "Small", "Medium"',
    '[e5] listbox "Multi" = "A", "C" options: "A", "B", "C"',
    '[e6] checkbox "I agree" [checked]',
    '[e7] radio "rd"',
    '[e8] button "Submit"',
    '[e9] button "Go"',
    '[e10] slider "Vol" = "30"',
    '[e11] button "Off" [disabled]',
    '[e12] button "Toggle" [checked]',
    '[e13] tab "Tab A" [selected]',
    '[e14] button "Menu" [expanded] [disabled]',
    '[e15] "Logo" -> /img',
    '[e16] button "Close"',
    '[e17] button "Named elsewhere"',
    '[e18] editable = "rich text"',
    "no href, just text",
  ]);
});

Deno.test("buildDomOutline() leaves out what is not rendered, and text under aria-hidden", () => {
  const root = page([
    { tag: "DIV", none: true, kids: ["none text", a("/none", "none link")] },
    {
      tag: "DIV",
      visibility: "hidden",
      kids: ["invisible", a("/vh", "vh link"), {
        tag: "SPAN",
        visibility: "visible",
        kids: ["shown again"],
      }],
    },
    { tag: "DIV", attrs: { "aria-hidden": "true" }, kids: ["hidden text ", a("/ah", "ah link")] },
    { tag: "SCRIPT", kids: ["var leaked = 1"] },
    { tag: "P", kids: ["Visible"] },
  ]);
  assert.deepEqual(outline(root).lines, [
    "shown again",
    '[e1] "ah link" -> /ah',
    "Visible",
  ]);
});

Deno.test("buildDomOutline() leaves out inert subtrees and what content-visibility:hidden holds, even laid out", () => {
  const root = page([
    { tag: "DIV", attrs: { inert: "" }, kids: ["inert text", a("/inert", "inert link")] },
    {
      tag: "DIV",
      contentVisibility: "hidden",
      kids: ["skipped text", a("/cv", "cv link"), { tag: "P", kids: ["skipped paragraph"] }],
    },
    { tag: "P", kids: ["Before"] },
    { tag: "DIV", attrs: { "aria-hidden": "true", inert: "" }, kids: [a("/both", "both")] },
    { tag: "P", kids: ["Visible"] },
  ]);
  assert.deepEqual(outline(root).lines, ["Before", "Visible"]);
});

Deno.test("buildDomOutline() reads open shadow roots but not the browser's own", () => {
  const root = page([
    { tag: "DIV", shadowRoot: { type: "open", kids: [{ tag: "BUTTON", kids: ["Shadow btn"] }] } },
    {
      tag: "INPUT",
      attrs: { "aria-label": "Date" },
      shadowRoot: { type: "user-agent", kids: [{ tag: "DIV", kids: ["ua text"] }] },
    },
    { tag: "DIV", shadowRoot: { type: "user-agent", kids: ["ua only"] } },
  ]);
  assert.deepEqual(outline(root).lines, ['[e1] button "Shadow btn"', '[e2] textbox "Date"']);
});

Deno.test("buildDomOutline() shows same-process frames in place and drops empty and error frames", () => {
  const root = page(
    [
      { tag: "P", kids: ["before"] },
      { tag: "IFRAME", contentDocument: 1 },
      { tag: "IFRAME", contentDocument: 2 },
      { tag: "IFRAME", contentDocument: 3 },
      { tag: "IFRAME", contentDocument: 4 },
      { tag: "P", kids: ["after"] },
    ],
    (b) => {
      b.document("C1", "http://127.0.0.2:9000/widget?x=1", [{ tag: "BUTTON", kids: ["In frame"] }]);
      b.document("C2", "http://127.0.0.1:8000/empty", []);
      b.document("C3", "chrome-error://chromewebdata/", [{ tag: "P", kids: ["error page"] }]);
      b.document("C4", "http://127.0.0.1:8000/unknown", [{ tag: "P", kids: ["unknown frame"] }]);
    },
    // C4 appeared after the caller read its frame tree: its refs could not be bound.
    (id) => id !== "C4",
  );
  const { issued, issue } = issuer();
  const { lines, stats } = buildDomOutline(root, issue);
  assert.deepEqual(lines, [
    "before",
    "[frame http://127.0.0.2:9000/widget]",
    '[e1] button "In frame"',
    "[/frame]",
    "after",
  ]);
  assert.equal(issued[0].frame, "C1");
  assert.equal(stats.frames, 3, "the empty frame was read, the error page was not");
});

Deno.test("domFrames() binds only documents of frames the caller knows", () => {
  const b = new SnapshotBuilder();
  b.document("F", URL0, [{ tag: "IFRAME", contentDocument: 1 }, {
    tag: "IFRAME",
    contentDocument: 2,
  }]);
  b.document("K", "http://127.0.0.1:8000/k", ["known"]);
  b.document("U", "http://127.0.0.1:8000/u", ["unknown"]);
  const urls: Record<string, string> = { F: URL0, K: "http://127.0.0.1:8000/k-from-tree" };
  const { frames, childFrames } = domFrames(b.snapshot(), (id) => urls[id]);
  assert.deepEqual([...frames.keys()], ["F", "K"]);
  assert.equal(frames.get("K")!.url, "http://127.0.0.1:8000/k-from-tree", "the frame tree's URL");
  assert.deepEqual([...childFrames.values()].map((f) => f.key), ["K"]);
  assert.equal(frames.get("F")!.childFrames, frames.get("K")!.childFrames, "one owner map");
});

// The bounded walks below are timed, with their budgets, by bench/hot_paths_bench.ts.
Deno.test("buildDomOutline() walks a page nested 200,000 deep without recursion", () => {
  let node: El = { tag: "DIV", kids: [a("/bottom", "Bottom link")] };
  for (let i = 0; i < 200_000; i++) node = { tag: i % 2 ? "DIV" : "SPAN", kids: [node] };
  const { lines } = outline(page([node, { tag: "P", kids: ["end"] }]));
  assert.deepEqual(lines, ['[e1] "Bottom link" -> /bottom', "end"]);
});

Deno.test("buildDomOutline() cuts giant names, values and targets before reading them", () => {
  const giant = "x".repeat(5_000_000);
  const root = page([
    a("/a", "text", { "aria-label": `  ${giant}` }),
    a(`/${giant}`, "long href"),
    { tag: "INPUT", attrs: { "aria-label": "Field" }, inputValue: giant },
    { tag: "H1", kids: [giant] },
  ]);
  const { lines } = outline(root);
  assert.equal(lines[0], `[e1] "${"x".repeat(119)}…" -> /a`);
  assert.ok(lines[1].startsWith('[e2] "long href" -> /xxx') && lines[1].endsWith("…"));
  assert.ok(lines[1].length < 1_100, `${lines[1].length}`);
  assert.equal(lines[2], `[e3] textbox "Field" = "${"x".repeat(119)}…"`);
  assert.equal(lines[3], `# ${"x".repeat(999)}…`);
});

Deno.test("buildDomOutline() bounds the names of nested controls", () => {
  // 3,000 nested buttons over 100,000 words: each name visits a bounded number of nodes.
  let node: El = { tag: "DIV", kids: Array.from({ length: 100_000 }, (_, i) => `w${i} `) };
  for (let i = 0; i < 3_000; i++) node = { tag: "DIV", attrs: { role: "button" }, kids: [node] };
  const root = page([node]);
  const { lines } = outline(root);
  assert.equal(lines.length, 3_000);
  assert.ok(lines.every((l) => /^\[e\d+\] button( "[^"]*")?$/.test(l)), lines[0]);
});

Deno.test("buildDomOutline() stops at its line and character budget", () => {
  const links = Array.from({ length: 1_000 }, (_, i) => a(`/i/${i}`, `Item ${i}`));
  const byLines = buildDomOutline(page(links), issuer().issue, {
    limits: { maxLines: 100, maxChars: 1e9 },
  });
  assert.equal(byLines.lines.length, 100);
  assert.equal(byLines.brief.length, 100);
  assert.equal(byLines.truncated, true);
  const byChars = buildDomOutline(
    page([{ tag: "P", kids: ["y".repeat(50_000)] }]),
    issuer().issue,
    { limits: { maxLines: 1e9, maxChars: 10_000 } },
  );
  assert.ok(byChars.lines.join("\n").length <= 10_000);
  assert.equal(byChars.truncated, true);
  const all = buildDomOutline(page(links), issuer().issue);
  assert.equal(all.truncated, false);
  assert.ok(OUTLINE_LIMITS.maxLines > 60_001, "a page of 60,000 links fits");
});

Deno.test("buildDomOutline() caps a page of 250,000 paragraphs at its default line budget", () => {
  const root = page(Array.from({ length: 250_000 }, (_, i): El => ({ tag: "P", kids: [`p${i}`] })));
  const { lines, truncated } = outline(root);
  assert.equal(lines.length, OUTLINE_LIMITS.maxLines);
  assert.equal(lines.at(-1), `p${OUTLINE_LIMITS.maxLines - 1}`);
  assert.equal(truncated, true);
});

Deno.test("buildDomOutline() keeps a frame's closing line when the budget ends inside it", () => {
  const root = page([{ tag: "IFRAME", contentDocument: 1 }], (b) => {
    b.document(
      "C1",
      "http://127.0.0.1:8000/c",
      Array.from({ length: 50 }, (_, i) => a(`/c${i}`, `C${i}`)),
    );
  });
  const { lines, truncated } = buildDomOutline(root, issuer().issue, {
    limits: { maxLines: 10, maxChars: 1e9 },
  });
  assert.equal(truncated, true);
  assert.equal(lines.at(-1), "[/frame]");
  // A budget that ends before the frame opens writes no closing line either.
  const before = page(
    [{ tag: "P", kids: ["first"] }, { tag: "IFRAME", contentDocument: 1 }],
    (b) => {
      b.document("C1", "http://127.0.0.1:8000/c", [a("/c", "C")]);
    },
  );
  const cut = buildDomOutline(before, issuer().issue, { limits: { maxLines: 1, maxChars: 1e9 } });
  assert.deepEqual(cut.lines, ["first"]);
  assert.equal(cut.truncated, true);
});

Deno.test("buildDomOutline() redacts names, values, text and targets before it cuts them", () => {
  const at = (n: number) => `${"o".repeat(n)}${PLANTED_PW} tail`;
  const root = page([
    // Cuts that would leave 21 (name), 5 (value), 11 (brief), 5 (line split) and 9
    // (link target, 1,000 characters) characters of it.
    a("/x", at(98)),
    { tag: "INPUT", attrs: { type: "text" }, inputValue: at(114) },
    { tag: "P", kids: [at(8)] },
    { tag: "P", kids: [at(995)] },
    a(`/${"o".repeat(989)}${PLANTED_PW}`, "Deep"),
    a(`http://${PLANTED_PW}.test/`, "Host"),
  ]);
  const { lines, brief } = buildDomOutline(root, issuer().issue, { redactor: plantedRedactor() });
  for (const line of [...lines, ...brief]) assert.ok(!holdsPiece(line), line);
  assert.ok(lines.some((l) => l.endsWith("-> http://[redacted].test")), lines.join("\n"));
});
