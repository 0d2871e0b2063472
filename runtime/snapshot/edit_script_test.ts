import assert from "node:assert/strict";
import { ADDED, REMOVED, shortestEdit } from "./edit_script.ts";

/** Applies an edit script to `before` and returns the result. */
function apply(before: string[], after: string[], edits: number[]): string[] {
  const out: string[] = [];
  let x = 0;
  for (let s = 0; s < edits.length; s += 3) {
    while (x < edits[s + 1]) out.push(before[x++]);
    if (edits[s] === REMOVED) x++;
    else out.push(after[edits[s + 2]]);
  }
  while (x < before.length) out.push(before[x++]);
  return out;
}

Deno.test("shortestEdit() finds the fewest edits and they turn before into after", () => {
  const cases: [string, string][] = [
    ["abcabba", "cbabac"],
    ["", "abc"],
    ["abc", ""],
    ["same", "same"],
    ["xaxbxc", "abc"],
  ];
  for (const [b, a] of cases) {
    const before = [...b];
    const after = [...a];
    const edits = shortestEdit(
      0,
      before.length,
      0,
      after.length,
      (x, y) => before[x] === after[y],
      100,
    );
    assert.ok(edits, `${b} -> ${a}`);
    assert.deepEqual(apply(before, after, edits), after, `${b} -> ${a}`);
  }
  const [b, a] = [[..."abcabba"], [..."cbabac"]];
  // Myers' example: five edits.
  assert.equal(shortestEdit(0, 7, 0, 6, (x, y) => b[x] === a[y], 100)!.length / 3, 5);
});

Deno.test("shortestEdit() gives up past maxD edits", () => {
  const before = [..."aaaa"];
  const after = [..."bbbb"];
  assert.equal(shortestEdit(0, 4, 0, 4, (x, y) => before[x] === after[y], 7), undefined);
  const edits = shortestEdit(0, 4, 0, 4, (x, y) => before[x] === after[y], 8)!;
  assert.equal(edits.filter((_, i) => i % 3 === 0 && edits[i] === ADDED).length, 4);
});
