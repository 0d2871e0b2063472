import assert from "node:assert/strict";
import { diffViews, type ViewDiff } from "./diff.ts";
import { renderDiff } from "./diff_format.ts";
import type { PageView } from "./page_view.ts";
import { bigOutline, pageView } from "../../tests/helpers/page_view.ts";

const view = (lines: string[], extra: Partial<PageView> = {}): PageView =>
  pageView(lines, { path: "/shop", title: "Shop", docId: "d3", ...extra });

/** Refs on the +, - and ~ lines of a diff (context lines excluded). */
const shownRefs = (diff: ViewDiff): string[] =>
  diff.hunks.flat().filter((l) => l.op !== "context").flatMap((l) => l.ref ? [l.ref] : []);

/** A deterministic PRNG so the randomized tests are reproducible. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

Deno.test("diffViews() refuses another document or origin, so a new document gets a full page", () => {
  const lines = ["# Home", '[e1] link "Next" -> /next'];
  assert.equal(diffViews(view(lines), view(lines, { docId: "d4" })), undefined);
  assert.equal(renderDiff(view(lines), view(lines, { docId: "d4" })), undefined);
  assert.equal(renderDiff(view(lines), view(lines, { origin: "http://127.0.0.2:1" })), undefined);
});

Deno.test("diffViews() diffs a 20,000-line outline with a few changes well under 50 ms", () => {
  const { lines, nextRef } = bigOutline(20_000);
  const after = [...lines];
  const textbox = after.findIndex((l, i) => i > 9_000 && l.includes("textbox"));
  after[textbox] = after[textbox].replace(/"$/, '" = "typed"');
  after.splice(15_000, 0, `[e${nextRef}] button "New"`, "Row 99 | 1 | $1");
  after.splice(4_000, 3);
  after[300] = "Paragraph changed text.";
  const b = view(lines);
  const a = view(after);
  // How long it takes is bench/hot_paths_bench.ts's (the same page): here, what it finds.
  const diff: ViewDiff | undefined = diffViews(b, a);
  const text = renderDiff(b, a);
  assert.ok(diff && text);
  assert.deepEqual([diff.added, diff.removed, diff.changed], [3, 4, 1]);
  assert.ok(text.length < 1_000, text);
});

Deno.test("diffViews() refuses a reordered 20,000-line page without refs in bounded time", () => {
  const { lines } = bigOutline(20_000);
  const text = lines.filter((l) => !l.startsWith("["));
  const shuffled = [...text].reverse();
  // Refused (bench/hot_paths_bench.ts times it).
  assert.equal(diffViews(view(text), view(shuffled)), undefined);
});

Deno.test("diffViews() never reports refs of unchanged lines", () => {
  const random = rng(7);
  for (let round = 0; round < 200; round++) {
    const { lines, nextRef } = bigOutline(40 + Math.floor(random() * 200));
    let ref = nextRef;
    const after = [...lines];
    const touched = new Set<string>();
    const refOf = (l: string) => /^\[(e\d+)\]/.exec(l)?.[1];
    const edits = 1 + Math.floor(random() * 6);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(random() * after.length);
      const pick = random();
      if (pick < 0.3) {
        const r = `e${ref++}`;
        touched.add(r);
        after.splice(at, 0, `[${r}] button "New ${r}"`);
      } else if (pick < 0.5) {
        after.splice(at, 0, `Fresh text ${round}-${e}`);
      } else if (pick < 0.7) {
        const r = refOf(after[at]);
        if (r) touched.add(r);
        after.splice(at, 1);
      } else {
        const r = refOf(after[at]);
        if (r) touched.add(r);
        after[at] = `${after[at]} [changed]`;
      }
    }
    if (random() < 0.5) {
      // An element moves; it is reported once, at its new place. Moving it past one
      // neighbour is a tie with moving the neighbour, so its neighbours count as touched.
      const start = Math.floor(random() * after.length);
      const from = after.findIndex((l, i) => i >= start && refOf(l) !== undefined);
      if (from >= 0) {
        const near = (at: number[]) => {
          for (const r of at.map((k) => after[k] && refOf(after[k]))) if (r) touched.add(r);
        };
        const [moved] = after.splice(from, 1);
        near([from - 1, from]);
        const to = Math.floor(random() * after.length);
        after.splice(to, 0, moved);
        near([to - 1, to + 1]);
        touched.add(refOf(moved)!);
      }
    }
    const diff = diffViews(view(lines), view(after))!;
    for (const r of shownRefs(diff)) assert.ok(touched.has(r), `round ${round}: ${r} unchanged`);
    // Content the diff claims was added and removed accounts for the difference exactly.
    const count = new Map<string, number>();
    for (const l of lines) count.set(l, (count.get(l) ?? 0) + 1);
    for (const l of after) count.set(l, (count.get(l) ?? 0) - 1);
    for (const l of diff.hunks.flat()) {
      if (l.op === "added" || l.op === "changed") count.set(l.text, (count.get(l.text) ?? 0) + 1);
    }
    const removedByRef = new Map<string, string>();
    for (const l of lines) {
      const r = refOf(l);
      if (r) removedByRef.set(r, l);
    }
    for (const l of diff.hunks.flat()) {
      if (l.op === "removed") count.set(l.text, (count.get(l.text) ?? 0) - 1);
      // A changed line's old text is gone too; it is not shown, so account for it here.
      if (l.op === "changed") {
        const old = removedByRef.get(l.ref!)!;
        count.set(old, (count.get(old) ?? 0) - 1);
      }
    }
    for (const [l, n] of count) assert.equal(n, 0, `round ${round}: ${l}`);
  }
});

Deno.test("diffViews() shows an element that moved once, as changed at its new place", () => {
  const before = view([
    "# List",
    '[e1] link "A"',
    '[e2] link "B"',
    '[e3] link "C"',
    '[e4] link "D"',
  ]);
  const after = view([
    "# List",
    '[e2] link "B"',
    '[e3] link "C"',
    '[e4] link "D"',
    '[e1] link "A"',
  ]);
  const diff = diffViews(before, after)!;
  assert.deepEqual([diff.added, diff.removed, diff.changed], [0, 0, 1]);
  assert.deepEqual(diff.hunks, [[
    { op: "context", text: "# List" },
    { op: "changed", text: '[e1] link "A"', ref: "e1" },
  ]]);
});

Deno.test("diffViews() matches lines with a duplicated ref by content", () => {
  // Page text imitating an element line must not pair with the real element.
  const before = view(['[e1] button "Pay"', 'Note: [e1] button "Pay"', "tail"]);
  const after = view([
    '[e1] button "Pay"',
    'Note: [e1] button "Pay"',
    '[e1] button "Pay" says the page',
    "tail",
  ]);
  const diff = diffViews(before, after)!;
  assert.deepEqual([diff.added, diff.removed, diff.changed], [1, 0, 0]);
});

Deno.test("diffViews() locates a hunk by its parent line, frame or the line above it", () => {
  const nested = [
    "# Settings",
    '[e1] group "Profile"',
    '  [e2] textbox "Name"',
    '  [e3] textbox "City"',
  ];
  const d1 = diffViews(
    view(nested),
    view([...nested.slice(0, 3), '  [e3] textbox "City" = "Oslo"']),
  )!;
  assert.deepEqual(d1.hunks[0][0], { op: "context", text: '[e1] group "Profile"', ref: "e1" });

  const framed = [
    "# Page",
    "[frame http://127.0.0.2:9000/widget]",
    "Widget text",
    '[e9] button "Pay"',
    "[/frame]",
  ];
  const d2 = diffViews(
    view(framed),
    view(framed.map((l) => l.replace('"Pay"', '"Pay" [disabled]'))),
  )!;
  assert.deepEqual(d2.hunks[0][0], { op: "context", text: "[frame http://127.0.0.2:9000/widget]" });

  const flat = ["intro", "first", "second", "third"];
  const d3 = diffViews(view(flat), view(["intro", "first", "second", "2.5", "third"]))!;
  assert.deepEqual(d3.hunks[0], [{ op: "context", text: "second" }, { op: "added", text: "2.5" }]);

  const headings = ["# A", "## B", "text", "## C", "more"];
  const d4 = diffViews(view(headings), view(["# A", "## B", "text", "## C2", "more"]))!;
  assert.equal(d4.hunks[0][0].text, "# A", "a heading's context is the heading above its level");

  // A removal's context is found in the old view and shown as it reads now.
  const d5 = diffViews(view(["# A", "x", "y", "# B"]), view(["# A", "# B"]))!;
  assert.deepEqual(d5.hunks, [[
    { op: "context", text: "# A" },
    { op: "removed", text: "x" },
    { op: "removed", text: "y" },
  ]]);
});

Deno.test("diffViews() reports separate hunks for separate changes", () => {
  const { lines } = bigOutline(300);
  const after = [...lines];
  after[20] = "changed one";
  after[200] = "changed two";
  const diff = diffViews(view(lines), view(after))!;
  assert.equal(diff.hunks.length, 2);
  for (const h of diff.hunks) assert.equal(h[0].op, "context");
});
