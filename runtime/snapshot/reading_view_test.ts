import assert from "node:assert/strict";
import { holdsPiece, PLANTED_PW, plantedRedactor } from "../../tests/helpers/planted_secret.ts";
import { LINE_MAX } from "./outline_line.ts";
import { readingLines, readingNote, readPageCall, splitLine } from "./reading_view.ts";

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
