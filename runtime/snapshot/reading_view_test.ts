import assert from "node:assert/strict";
import { holdsPiece, PLANTED_PW, plantedRedactor } from "../../tests/helpers/planted_secret.ts";
import { LINE_MAX } from "./outline_line.ts";
import {
  articleLinkLines,
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
  "[e9] -> http://127.0.0.2:9/away",
  '[e10] button "Share"',
  '[e11] "‹‹‹fake›››" -> /fake',
];

Deno.test("articleLinkLines() gives each article link the outline's line, by target then name", () => {
  const out = articleLinkLines(
    [
      { line: 0, text: "Notes", href: "http://127.0.0.1:8080/notes?utm=1#top" },
      { line: 0, text: "the notes", href: "http://127.0.0.1:8080/notes" },
      { line: 2, text: "away", href: "http://127.0.0.2:9/away" },
      // A third link to /notes: both of its lines are taken.
      { line: 2, text: "notes again", href: "http://127.0.0.1:8080/notes" },
      // Not in the outline (the page added it later): it stays text, no ref is made up.
      { line: 3, text: "new", href: "http://127.0.0.1:8080/new" },
    ],
    OUTLINE,
    PAGE,
  );
  assert.deepEqual([...out], [
    [0, ['[e8] "Notes" -> /notes', '[e7] "the notes" -> /notes']],
    [2, ["[e9] -> http://127.0.0.2:9/away"]],
  ]);
});

Deno.test("articleLinkLines() neutralizes the lines it takes from the outline", () => {
  const out = articleLinkLines(
    [{ line: 0, text: "<<<fake>>>", href: "http://127.0.0.1:8080/fake" }],
    ['[e11] "<<<fake>>>" -> /fake'],
    PAGE,
  );
  assert.deepEqual(out.get(0), ['[e11] "‹‹‹fake›››" -> /fake']);
});

Deno.test("articleLinkLines() lists at most READ_LINK_LINES links and counts the rest", () => {
  const n = READ_LINK_LINES + 5;
  const outline = Array.from({ length: n }, (_, i) => `[e${i + 1}] "L${i}" -> /l/${i}`);
  const links = Array.from({ length: n }, (_, i) => ({
    line: i,
    text: `L${i}`,
    href: `http://127.0.0.1:8080/l/${i}`,
  }));
  const out = articleLinkLines(links, outline, PAGE);
  const all = [...out.values()].flat();
  assert.equal(all.filter((l) => l.startsWith("[e")).length, READ_LINK_LINES);
  assert.deepEqual(out.get(READ_LINK_LINES - 1), [
    `[e${READ_LINK_LINES}] "L${READ_LINK_LINES - 1}" -> /l/${READ_LINK_LINES - 1}`,
    "<<<5 more links in the text have refs: browser_find finds one by name>>>",
  ]);
});

Deno.test("articleLinkLines() leaves a link within the page itself as text", () => {
  const out = articleLinkLines(
    [
      { line: 0, text: "Skip to main content", href: `${PAGE}#main` },
      { line: 1, text: "Photo 1", href: `${PAGE}#img-1` },
      { line: 2, text: "This page", href: PAGE },
      { line: 3, text: "Home", href: "http://127.0.0.1:8080/" },
    ],
    ['[e20] "Skip to main content" -> /article', '[e21] "Photo 1" -> /article', ...OUTLINE],
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
  assert.deepEqual(lines, ["First ‹‹‹x››› paragraph", '[e3] "x" -> /x', "Second"]);
});
