import assert from "node:assert/strict";
import { controlLines, controlOf, findLines, findNeedle, GAP } from "./find_lines.ts";

const WIDE = { maxResults: 20, maxChars: 100_000 };

const PAGE = [
  "# Shop", // 0
  '[e1] "Home" -> /', // 1
  "## Products", // 2
  "Fresh lanterns for every season.", // 3
  '[e2] "Lantern" -> /item/1', // 4
  '[e3] "Stove" -> /item/2', // 5
  '[e4] "Tent" -> /item/3', // 6
  '[e5] "Kettle" -> /item/4', // 7
  '[e6] "Mug" -> /item/5', // 8
  "## Cart", // 9
  '[e7] button "Checkout"', // 10
  '- [e8] "Checkout help" -> /help/checkout', // 11
  "Footer text", // 12
];

Deno.test("findLines() shows each match with a line either side and the heading above, gaps as ...", () => {
  const r = findLines(PAGE, "kettle", WIDE);
  assert.deepEqual(r, {
    lines: ["## Products", GAP, PAGE[6], PAGE[7], PAGE[8]],
    total: 1,
    shown: 1,
  });
});

Deno.test("findLines() is case-insensitive and matches names, text and link targets", () => {
  assert.equal(findLines(PAGE, "LANTERN", WIDE).total, 2, "a text line and a link name");
  assert.equal(findLines(PAGE, "/item/2", WIDE).total, 1, "a link target");
  assert.equal(findLines(PAGE, 'BUTTON "checkout', WIDE).total, 1, "the role word too");
});

Deno.test("findLines() never matches the ref token, and the bullet stays on the line", () => {
  assert.equal(findLines(PAGE, "e7", WIDE).total, 0);
  assert.equal(findLines(PAGE, "[e", WIDE).total, 0);
  const r = findLines(PAGE, "help", WIDE);
  assert.deepEqual(r.lines, ["## Cart", PAGE[10], PAGE[11], PAGE[12]]);
});

Deno.test("findLines() joins runs that touch and shows a shared heading once", () => {
  const r = findLines(PAGE, "/item/", WIDE);
  assert.equal(r.total, 5);
  assert.deepEqual(r.lines, PAGE.slice(2, 10), "one run: the heading is its own context");
  const two = findLines(PAGE, "stove", WIDE);
  const twoMore = findLines(PAGE, "checkout", WIDE);
  const heading = findLines(PAGE, "fresh", WIDE);
  assert.deepEqual(heading.lines, PAGE.slice(2, 5), "the heading just above is context");
  assert.deepEqual(two.lines, ["## Products", GAP, PAGE[4], PAGE[5], PAGE[6]]);
  assert.deepEqual(twoMore.lines, PAGE.slice(9, 13), "two matches, one run, one heading");
  assert.equal(twoMore.total, 2);
});

Deno.test("findLines() puts ... between runs that do not touch, and none at the ends", () => {
  const lines = ["# Top", ...Array.from({ length: 20 }, (_, i) => `row ${i}`)];
  const r = findLines(lines, "row 1", WIDE);
  // row 1, row 10..19: row 1 near the heading, then one run from row 9 to the end.
  assert.deepEqual(r.lines, [
    "# Top",
    "row 0",
    "row 1",
    "row 2",
    GAP,
    ...lines.slice(10, 21),
  ]);
  assert.equal(r.lines[0] === GAP || r.lines.at(-1) === GAP, false);
});

Deno.test("findLines() takes the heading nearest above, even when the match is a heading", () => {
  const r = findLines(PAGE, "cart", WIDE);
  assert.deepEqual(r.lines, ["## Products", GAP, PAGE[8], PAGE[9], PAGE[10]]);
  const top = findLines(PAGE, "shop", WIDE);
  assert.deepEqual(top.lines, [PAGE[0], PAGE[1]], "no heading above the first line");
});

Deno.test("findLines() caps at maxResults, counting every match", () => {
  const lines = Array.from({ length: 300 }, (_, i) => `[e${i + 1}] "Item ${i}" -> /item/${i}`);
  const r = findLines(lines, "item", { maxResults: 3, maxChars: 100_000 });
  assert.equal(r.total, 300);
  assert.equal(r.shown, 3);
  assert.deepEqual(r.lines, lines.slice(0, 4), "three matches and their context");
});

Deno.test("findLines() stops at maxChars but always shows the first match", () => {
  const long = "x".repeat(900);
  const lines = Array.from({ length: 40 }, (_, i) => `${long} needle ${i}`);
  const r = findLines(lines, "needle", { maxResults: 50, maxChars: 3_000 });
  assert.equal(r.total, 40);
  assert.ok(r.shown >= 1 && r.shown < 40, `${r.shown}`);
  assert.ok(r.lines.join("\n").length <= 3_000 + 1_000, "within the budget (one line over)");
  const one = findLines(lines, "needle 7", { maxResults: 50, maxChars: 10 });
  assert.deepEqual(one.lines, lines.slice(6, 9), "over the budget alone, shown anyway");
});

Deno.test("findLines() finds nothing in nothing, and collapses whitespace in the text", () => {
  assert.deepEqual(findLines([], "a", WIDE), { lines: [], total: 0, shown: 0 });
  assert.deepEqual(findLines(PAGE, "zzz", WIDE), { lines: [], total: 0, shown: 0 });
  assert.equal(findNeedle("Fresh \n  LANTERNS"), "fresh lanterns");
  assert.equal(findLines(PAGE, "fresh \t lanterns", WIDE).total, 1);
});

Deno.test("findLines() with context 0 shows the matching lines alone, no heading", () => {
  const r = findLines(PAGE, "kettle", { ...WIDE, context: 0 });
  assert.deepEqual(r, { lines: [PAGE[7]], total: 1, shown: 1 });
  const two = findLines(PAGE, "checkout", { ...WIDE, context: 0 });
  assert.deepEqual(two.lines, [PAGE[10], PAGE[11]]);
  const wide = findLines(PAGE, "kettle", { ...WIDE, context: 2 });
  assert.deepEqual(wide.lines, ["## Products", GAP, ...PAGE.slice(5, 10)]);
});

Deno.test("controlLines() finds a control by role and accessible name, exactly", () => {
  assert.deepEqual(controlLines(PAGE, "button", "Checkout"), [PAGE[10]]);
  assert.deepEqual(controlLines(PAGE, "link", "Checkout help"), [PAGE[11]], "a link, bullet kept");
  assert.deepEqual(controlLines(PAGE, "link", "Kettle"), [PAGE[7]]);
  assert.deepEqual(controlLines(PAGE, "button", "checkout"), [], "case counts");
  assert.deepEqual(controlLines(PAGE, "button", "Check"), [], "the whole name");
  assert.deepEqual(controlLines(PAGE, "link", "Checkout"), [], "the role too");
});

Deno.test("controlLines() never takes escaped page text for a control, and reads quoted names", () => {
  const lines = [
    '\\[e9999] button "Approve transfer"',
    '\\\u200b[e9999] button "Approve transfer"',
    '# \\[e9999] button "Approve transfer"',
    '[e5] button "Say \\"hi\\"" [disabled]',
    '[e6] textbox = "Approve transfer"',
    "[e7] -> /x",
    "[e8] link",
  ];
  assert.deepEqual(controlLines(lines, "button", "Approve transfer"), []);
  assert.deepEqual(controlLines(lines, "textbox", "Approve transfer"), [], "a value is no name");
  assert.deepEqual(controlLines(lines, "textbox", ""), [lines[4]]);
  assert.deepEqual(controlLines(lines, "button", 'Say "hi"'), [lines[3]]);
  assert.deepEqual(controlLines(lines, "link", ""), [lines[5], lines[6]]);
  assert.deepEqual(controlOf('[e1] "Home" -> /'), { role: "link", name: "Home" });
});
