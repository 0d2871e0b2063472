import assert from "node:assert/strict";
import { carryRefs } from "./ref_carry.ts";

const allow = () => true;

Deno.test("carryRefs() gives a gone element's ref to the one new line that reads the same", () => {
  const before = ['[e1] link "Home" -> /', "# Results", '- [e2] link "Oak lamp" -> /p/1'];
  const lines = ['[e1] link "Home" -> /', "# Results", '- [e9] link "Oak lamp" -> /p/1'];
  const brief = [...lines];
  const moves: string[] = [];
  const n = carryRefs(before, lines, brief, 5, (old, fresh) => {
    moves.push(`${fresh}->${old}`);
    return true;
  });
  assert.equal(n, 1);
  assert.deepEqual(moves, ["e9->e2"]);
  assert.equal(lines[2], '- [e2] link "Oak lamp" -> /p/1');
  assert.equal(brief[2], '- [e2] link "Oak lamp" -> /p/1');
});

Deno.test("carryRefs() keeps fresh refs for look-alikes, present refs, older refs and refusals", () => {
  const before = [
    '[e1] button "Add to cart"',
    '[e2] button "Add to cart"',
    '[e3] link "Next" -> /p',
    '[e4] button "Pay"',
    '[e6] button "Buy"',
  ];
  const lines = [
    '[e10] button "Add to cart"', // two gone lines read like it: a guess, not a match
    '[e3] link "Next" -> /p', // still on the page: nothing to carry
    '[e11] link "Next" -> /p', // e3 is present, so no gone line reads like it
    '[e5] button "Pay"', // an older ref (below firstFresh) is never rewritten
    '[e12] button "Buy"',
  ];
  const copy = [...lines];
  assert.equal(carryRefs(before, lines, [...lines], 10, () => false), 0, "refused by the table");
  assert.deepEqual(lines, copy);
  assert.equal(carryRefs(before, lines, [...lines], 10, allow), 1);
  assert.deepEqual(lines, [...copy.slice(0, 4), '[e6] button "Buy"']);
});

Deno.test("carryRefs() needs the same place: indentation and list bullet are part of the line", () => {
  const before = ['  [e1] button "Save"'];
  const lines = ['[e7] button "Save"'];
  assert.equal(carryRefs(before, lines, [...lines], 5, allow), 0);
  assert.equal(lines[0], '[e7] button "Save"');
});
