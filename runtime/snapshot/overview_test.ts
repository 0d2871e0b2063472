import assert from "node:assert/strict";
import { ALIAS_MIN_USES, aliasOrigins, overviewLines } from "./overview.ts";
import { RUN_FOLD_MIN } from "./run_fold.ts";

Deno.test("overviewLines() leaves out a link that repeats an earlier one word for word", () => {
  const lines = [
    '[e1] "Share" -> https://social.example/share',
    '[e2] "Share" -> https://social.example/share',
    '[e3] "Share" -> https://social.example/other',
    '[e4] button "Share"',
    '[e5] button "Share"',
  ];
  const brief = [
    '[e1] "Share" -> https://social.example',
    '[e2] "Share" -> https://social.example',
    '[e3] "Share" -> https://social.example',
    '[e4] button "Share"',
    '[e5] button "Share"',
  ];
  // The full lines decide: e3 goes elsewhere; buttons with one name may do different things.
  assert.deepEqual(overviewLines(lines, brief), [brief[0], brief[2], brief[3], brief[4]]);
});

Deno.test("overviewLines() keeps a repeated link with no target (its script may differ)", () => {
  const lines = ['[e1] "Menu"', '[e2] "Menu"'];
  assert.deepEqual(overviewLines(lines, lines), lines);
});

Deno.test("overviewLines() keeps the first text line of each run, and every other line", () => {
  const lines = [
    "# Story",
    "First paragraph, long",
    "Second paragraph",
    "- a list item",
    '[e1] button "Like"',
    "After the button",
    "More text",
    "<<<3 lines as before: e7–e9>>>",
    "Text after a marker",
    "[frame http://127.0.0.2/]",
    "Inside the frame",
    "[/frame]",
  ];
  // Text lines cut to 12 characters, as the outline writer cuts them (to 20).
  const brief = lines.map((l) =>
    l.length > 12 && !/^(?:\[|#|<<<)/.test(l) ? l.slice(0, 11) + "…" : l
  );
  assert.deepEqual(overviewLines(lines, brief), [
    "# Story",
    brief[1],
    '[e1] button "Like"',
    brief[5],
    "<<<3 lines as before: e7–e9>>>",
    brief[8],
    "[frame http://127.0.0.2/]",
    "Inside the …",
    "[/frame]",
  ]);
});

Deno.test("overviewLines() drops lines with no overview form and folds long link runs", () => {
  const n = RUN_FOLD_MIN + 5;
  const lines = Array.from({ length: n }, (_, i) => `[e${i}] "Item ${i}" -> /i/${i}`);
  const brief = Array.from({ length: n }, (_, i) => `[e${i}] "Item ${i}"`);
  const out = overviewLines(["text", ...lines, "tail"], ["text", ...brief, ""]);
  assert.equal(out.length, 2);
  assert.match(out[1], new RegExp(`^<<<${n} links: e0–e${n - 1};`));
});

Deno.test("aliasOrigins() writes an origin named twice once, and @N after its arrows", () => {
  const page = [
    '[e1] "A" -> https://a.example',
    "- [e2] -> https://a.example",
    '[e3] "B" -> https://b.example',
    '[e4] "C" -> http://127.0.0.2:8080',
    '[e5] "D" -> http://127.0.0.2:8080',
    '[e6] "E" -> https://a.example',
  ];
  assert.equal(ALIAS_MIN_USES, 2);
  assert.deepEqual(aliasOrigins(page), [
    "<<<origins: @1 https://a.example, @2 http://127.0.0.2:8080>>>",
    '[e1] "A" -> @1',
    "- [e2] -> @1",
    '[e3] "B" -> https://b.example',
    '[e4] "C" -> @2',
    '[e5] "D" -> @2',
    '[e6] "E" -> @1',
  ]);
});

Deno.test("aliasOrigins() leaves a page alone when no origin repeats, and text as it is", () => {
  const page = [
    '[e1] "A" -> https://a.example',
    "See -> https://a.example",
    "See -> https://a.example",
    '[e2] button "Go" -> https://b.example [disabled]',
  ];
  assert.deepEqual(aliasOrigins(page), page);
});
