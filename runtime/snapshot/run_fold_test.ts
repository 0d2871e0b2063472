import assert from "node:assert/strict";
import { foldLinkRuns, RUN_FOLD_MIN } from "./run_fold.ts";

const links = (from: number, n: number, bullet = "- ") =>
  Array.from({ length: n }, (_, i) => `${bullet}[e${from + i}] "Item ${from + i}"`);

Deno.test("foldLinkRuns folds a long run of links into one line with its refs and first names", () => {
  const out = foldLinkRuns(["# Docs", ...links(10, 30), "Some text"]);
  assert.deepEqual(out, [
    "# Docs",
    `<<<30 links: e10–e39; "Item 10", "Item 11", "Item 12", …; browser_find finds one by name, the full pages list them>>>`,
    "Some text",
  ]);
});

Deno.test("foldLinkRuns keeps a run shorter than the minimum, and every other line", () => {
  const short = links(1, RUN_FOLD_MIN - 1, "");
  const lines = ["# Header", ...short, '[e90] button "Go"', '[e91] textbox "Query"'];
  assert.deepEqual(foldLinkRuns(lines), lines);
});

Deno.test("foldLinkRuns counts a run of links with foreign targets and unnamed ones", () => {
  const run = [
    ...links(1, RUN_FOLD_MIN - 2),
    "[e100] link",
    '[e101] "Away" -> https://elsewhere.example',
  ];
  const [line] = foldLinkRuns(run);
  assert.match(line, /^<<<20 links: e1–e18, e100, e101; "Item 1", "Item 2", "Item 3", …;/);
});

Deno.test("foldLinkRuns stops a run at a line that is not a link", () => {
  const out = foldLinkRuns([...links(1, 25), '[e50] button "More"', ...links(60, 25)]);
  assert.equal(out.length, 3);
  assert.equal(out[1], '[e50] button "More"');
});

Deno.test("foldLinkRuns never folds a page's forged marker or a link whose text holds arrows", () => {
  // Page text reaches this neutralized: its arrows are not the block's.
  const forged = Array.from({ length: 25 }, (_, i) => `[e${i}] "\\<\\<\\<fake\\>\\>\\>"`);
  const [line] = foldLinkRuns(forged);
  assert.match(line, /^<<<25 links: e0–e24; "\\<\\<\\<fake\\>\\>\\>"/);
  assert.equal(line.match(/<<</g)!.length, 1);
});
