import assert from "node:assert/strict";
import { holdsPiece, PLANTED_PW, plantedRedactor } from "../../tests/helpers/planted_secret.ts";
import { LINE_MAX } from "./outline_line.ts";
import {
  articleLinkLines,
  mainFrameLines,
  READ_LINK_LINES,
  readingLines,
  readingNote,
  readPageCall,
  splitLine,
} from "./reading_view.ts";

Deno.test("splitLine() keeps short lines whole and splits long ones at a space", () => {
  assert.deepEqual(splitLine("a short paragraph"), ["a short paragraph"]);
  const words = Array.from({ length: 400 }, (_, i) => `word${i}`).join(" ");
  const parts = splitLine(words);
  assert.ok(parts.length > 1);
  for (const p of parts) assert.ok(p.length <= LINE_MAX, `${p.length}`);
  assert.equal(parts.join(" "), words);
  assert.ok(parts.every((p) => /^word\d+$/.test(p.split(" ").at(-1)!)), "no word is cut");
  // No space to split at: cut at the limit.
  assert.deepEqual(splitLine("x".repeat(2_500)).map((p) => p.length), [1_000, 1_000, 500]);
});

Deno.test("readingLines() redacts a paragraph whole before splitting it", () => {
  // The secret straddles the hard cut of the paragraph's first line (no space near it).
  const paragraph = `${"a ".repeat(200)}${"x".repeat(590)}${PLANTED_PW} ${"ipsum ".repeat(200)}`;
  assert.ok(!holdsPiece(splitLine(paragraph)[0].slice(0, 990)));
  assert.ok(holdsPiece(splitLine(paragraph)[0]), "split unredacted, a piece would show");
  const lines = readingLines([paragraph, "# A heading"], false, plantedRedactor());
  assert.ok(lines.length > 2);
  assert.ok(lines.every((l) => l.length <= LINE_MAX));
  assert.ok(!holdsPiece(lines.join("\n")), "no piece of the secret across the split");
  assert.match(lines.join(" "), /\[redacted\]/);
  assert.equal(lines.at(-1), "# A heading");
});

Deno.test("readingLines() drops the tail of a paragraph the page cut, where a piece of a secret can hide", () => {
  const cutInSecret = `The last paragraph ends in ${PLANTED_PW.slice(0, 12)}`;
  const lines = readingLines(["whole paragraph", cutInSecret], true, plantedRedactor());
  assert.equal(lines[0], "whole paragraph");
  assert.ok(!holdsPiece(lines.join("\n")), lines.join("\n"));
  assert.match(lines[1], /^The last paragraph/);
});

Deno.test("readPageCall() and readingNote() say how to read on and when the text was cut", () => {
  assert.equal(readPageCall(3), 'browser_snapshot {"mode": "read", "page": 3}');
  assert.equal(readingNote(false, 2_000_000), undefined);
  assert.equal(readingNote(true, 2_000_000), "note: article text cut after 2,000,000 characters");
});

const PAGE = "http://127.0.0.1:8080/article";
const OUTLINE = [
  '[e1] "Home" -> /',
  "# Story",
  "Paragraph one, see the notes.",
  '- [e7] "the notes" -> /notes',
  '[e8] "Notes" -> /notes',
  "[frame http://127.0.0.2:9/]",
  '[e9] "the notes" -> /notes',
  "[/frame]",
  '[e10] "<<<fake>>>" -> /fake',
];
/** Link `n` of the page, whose element has backend node `node` (if found). */
const link = (line: number, href: string, node?: number) => ({
  line,
  href: `http://127.0.0.1:8080${href}`,
  ...(node === undefined ? {} : { backendNodeId: node }),
});
/** Elements by backend node: node 100 + N is eN's. */
const lineOf = (l: { backendNodeId?: number }) =>
  l.backendNodeId === undefined ? undefined : mainFrameLines(OUTLINE).get(l.backendNodeId - 100);

Deno.test("mainFrameLines() gives the main frame's element lines by ref, bullets dropped", () => {
  assert.deepEqual([...mainFrameLines(OUTLINE)], [
    [1, '[e1] "Home" -> /'],
    [7, '[e7] "the notes" -> /notes'],
    [8, '[e8] "Notes" -> /notes'],
    [10, '[e10] "<<<fake>>>" -> /fake'],
  ]);
});

Deno.test("articleLinkLines() gives each link the line of its own element, once, else none", () => {
  const out = articleLinkLines(
    [
      link(0, "/notes", 108),
      link(0, "/notes", 107),
      // Its element is in no outline line (added later, or a frame's): it stays text.
      link(2, "/notes", 109),
      link(2, "/notes"),
      // The same element twice (one link split across lines): one line.
      link(3, "/", 101),
      link(3, "/", 101),
    ],
    lineOf,
    PAGE,
  );
  assert.deepEqual([...out], [
    [0, ['[e8] "Notes" -> /notes', '[e7] "the notes" -> /notes']],
    [3, ['[e1] "Home" -> /']],
  ]);
});

Deno.test("articleLinkLines() neutralizes the lines it takes from the outline", () => {
  const out = articleLinkLines([link(0, "/fake", 110)], lineOf, PAGE);
  assert.deepEqual(out.get(0), ['[e10] "\\<\\<\\<fake\\>\\>\\>" -> /fake']);
});

Deno.test("articleLinkLines() lists at most READ_LINK_LINES links and counts the rest", () => {
  const n = READ_LINK_LINES + 5;
  const links = Array.from({ length: n }, (_, i) => link(i, `/l/${i}`, i));
  const out = articleLinkLines(links, (l) => `[e${l.backendNodeId! + 1}] "L" -> /l`, PAGE);
  const all = [...out.values()].flat();
  assert.equal(all.filter((l) => l.startsWith("[e")).length, READ_LINK_LINES);
  assert.deepEqual(out.get(READ_LINK_LINES - 1), [
    `[e${READ_LINK_LINES}] "L" -> /l`,
    "<<<5 more links in the text have refs: browser_find finds one by name>>>",
  ]);
});

Deno.test("articleLinkLines() leaves a link within the page itself as text", () => {
  const out = articleLinkLines(
    [link(0, "/article#main", 101), link(1, "/article", 101), link(3, "/", 101)],
    lineOf,
    PAGE,
  );
  assert.deepEqual([...out], [[3, ['[e1] "Home" -> /']]]);
});

Deno.test("readingLines() says a paragraph that is all one link once, as its link line", () => {
  const lines = readingLines(
    ["whale strandings", "Text with a link to whales.", "Not the name"],
    false,
    plantedRedactor(),
    new Map([
      [0, ['[e3] "whale strandings" -> /w']],
      [1, ['[e4] "whales" -> /x']],
      [2, ['[e5] "Other" -> /y']],
    ]),
  );
  assert.deepEqual(lines, [
    '[e3] "whale strandings" -> /w',
    "Text with a link to whales.",
    '[e4] "whales" -> /x',
    "Not the name",
    '[e5] "Other" -> /y',
  ]);
});

Deno.test("readingLines() puts a paragraph's link lines after it, and neutralizes page text", () => {
  const lines = readingLines(
    ["First <<<x>>> paragraph", "Second"],
    false,
    plantedRedactor(),
    new Map([[0, ['[e3] "x" -> /x']]]),
  );
  assert.deepEqual(lines, ["First \\<\\<\\<x\\>\\>\\> paragraph", '[e3] "x" -> /x', "Second"]);
});
