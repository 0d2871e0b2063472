import assert from "node:assert/strict";
import { holdsPiece, PLANTED_PW, plantedRedactor } from "../../tests/helpers/planted_secret.ts";
import { LINE_MAX, MAX_FRAME_DEPTH } from "./outline_line.ts";
import { OutlineWriter } from "./outline_writer.ts";

Deno.test("OutlineWriter.text() spaces runs of two boxes, never around inline runs", () => {
  const out = new OutlineWriter();
  out.text("one", "div-a");
  out.text("two", "div-b");
  out.flush();
  out.text("em", "p", false);
  out.text("phasis", "em", false);
  out.text("  and   space ", "p", false);
  assert.deepEqual(out.finish().lines, ["one two", "emphasis and space"]);
});

Deno.test("OutlineWriter.flush() splits a long line and briefs only its first piece", () => {
  const out = new OutlineWriter();
  out.bullet();
  out.text("w".repeat(LINE_MAX + 10), 1);
  const { lines, brief } = out.finish();
  assert.equal(lines.length, 2);
  assert.ok(lines[0].startsWith("- w"));
  assert.equal(brief[1], "");
  assert.ok(brief[0].endsWith("…"));
});

Deno.test("OutlineWriter stops at its budget and still closes an open frame", () => {
  const out = new OutlineWriter({ limits: { maxLines: 2, maxChars: 1e9 } });
  out.line("[frame http://127.0.0.2:1/]");
  out.line("one");
  out.line("two");
  out.closeFrame();
  const outline = out.finish();
  assert.equal(outline.truncated, true);
  assert.deepEqual(outline.lines, ["[frame http://127.0.0.2:1/]", "one", "[/frame]"]);
});

Deno.test("OutlineWriter redacts a text line before it is split or briefed", () => {
  const out = new OutlineWriter({ redactor: plantedRedactor() });
  out.text(`${"o".repeat(LINE_MAX - 5)}${PLANTED_PW} tail`, 1);
  out.text(`${"o".repeat(10)}${PLANTED_PW}`, 1);
  const { lines, brief } = out.finish();
  for (const line of [...lines, ...brief]) assert.ok(!holdsPiece(line), line);
});

Deno.test("OutlineWriter.control() drops a text line just before it that only repeats its name", () => {
  const out = new OutlineWriter();
  out.text("Email:", "label-1");
  out.control({ ref: "e1", role: "textbox", name: "Email" });
  out.text("Phone", "label-2");
  out.control({ ref: "e2", role: "textbox", name: "Mobile" });
  out.bullet();
  out.text("City", "li");
  out.control({ ref: "e3", role: "textbox", name: "City" });
  out.text("Zip", "label-3");
  out.control({ ref: "e4", role: "textbox", name: "" });
  const { lines, brief } = out.finish();
  assert.deepEqual(lines, [
    '[e1] textbox "Email"',
    "Phone",
    '[e2] textbox "Mobile"',
    // A list item's label goes too; its bullet moves to the field.
    '- [e3] textbox "City"',
    "Zip",
    "[e4] textbox",
  ]);
  assert.equal(brief.length, lines.length);
  assert.equal(brief[0], '[e1] textbox "Email"');
});

Deno.test("OutlineWriter.control() drops a heading that is all its name, and takes its bullet", () => {
  const out = new OutlineWriter();
  out.bullet();
  out.heading(3, "Arc lamp");
  out.control({ ref: "e1", role: "link", name: "Arc lamp", target: "/p/1" });
  out.heading(2, "Settings");
  out.control({ ref: "e2", role: "button", name: "Save" });
  const { lines, brief } = out.finish();
  assert.deepEqual(lines, [
    '- [e1] "Arc lamp" -> /p/1',
    "## Settings",
    '[e2] button "Save"',
  ]);
  assert.deepEqual(brief, ['- [e1] "Arc lamp"', "## Settings", '[e2] button "Save"']);
});

Deno.test("OutlineWriter.target() shows no target for a link with a query to the page's own path", () => {
  const out = new OutlineWriter();
  const page = "http://127.0.0.1:8/shop?q=lamp";
  // The query is never shown: a pager's or a filter's target would only repeat the path.
  assert.equal(out.target("http://127.0.0.1:8/shop?q=lamp&page=2", page), undefined);
  // Without a query a link keeps its target: a menu reads the same on every page.
  assert.equal(out.target("http://127.0.0.1:8/shop#top", page), "/shop");
  assert.equal(out.target("http://127.0.0.1:8/shop", page), "/shop");
  assert.equal(out.target("http://127.0.0.1:8/shop/p/1", page), "/shop/p/1");
  assert.equal(out.target("http://127.0.0.2:8/shop", page), "http://127.0.0.2:8/shop");
});

Deno.test("OutlineWriter.flush() writes page text that opens like a ref's line as text", () => {
  const out = new OutlineWriter();
  out.text('[e1] "Home" -> /', "p");
  out.flush();
  out.bullet();
  out.text('[e2] button "Delete"', "li");
  out.flush();
  out.text("x".repeat(LINE_MAX) + "[e3] split here", "long");
  const { lines, brief } = out.finish();
  assert.equal(lines[0], '\\[e1] "Home" -> /');
  assert.equal(lines[1], '- \\[e2] button "Delete"');
  assert.equal(lines[3], "\\[e3] split here", "a piece after a split too");
  assert.equal(brief[0], '\\[e1] "Home" -> /', "short enough to brief whole");
});

Deno.test("OutlineWriter.frame() wraps a child frame, takes back an empty one, skips error pages and deep ones", () => {
  const out = new OutlineWriter();
  const rendered: string[] = [];
  assert.equal(out.frame("http://127.0.0.2:1/a", 0, () => out.line("inside")), true);
  assert.equal(out.frame("http://127.0.0.2:1/empty", 0, () => {}), true);
  assert.equal(out.frame("chrome-error://chromewebdata/", 0, () => rendered.push("error")), true);
  assert.equal(
    out.frame("http://127.0.0.2:1/deep", MAX_FRAME_DEPTH + 1, () => rendered.push("deep")),
    true,
  );
  assert.equal(out.frame("http://127.0.0.2:1/last", MAX_FRAME_DEPTH, () => out.line("x")), true);
  assert.deepEqual(rendered, []);
  assert.deepEqual(out.finish().lines, [
    "[frame http://127.0.0.2:1/a]",
    "inside",
    "[/frame]",
    "[frame http://127.0.0.2:1/last]",
    "x",
    "[/frame]",
  ]);
});

Deno.test("OutlineWriter.frame() answers false and renders nothing when the budget ended before it", () => {
  const out = new OutlineWriter({ limits: { maxLines: 1, maxChars: 1e9 } });
  out.line("full");
  let rendered = false;
  assert.equal(out.frame("http://127.0.0.2:1/", 0, () => rendered = true), false);
  assert.equal(rendered, false);
  assert.deepEqual(out.finish().lines, ["full"]);
});
