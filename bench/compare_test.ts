import assert from "node:assert/strict";
import { coverage, geomean, median, omotaiControls, playwrightControls } from "./compare.ts";

Deno.test("playwrightControls() reads roles and names from an aria snapshot", () => {
  const text = `- generic [ref=e1]:
  - link "Home" [ref=e2] [cursor=pointer]:
    - /url: /
  - textbox "Search \\"all\\"" [ref=e3]
  - button [ref=e4]
  - heading "Title" [level=1] [ref=e5]`;
  assert.deepEqual(playwrightControls(text), [
    { cls: "link", name: "home" },
    { cls: "input", name: 'search "all"' },
    { cls: "button", name: "" },
  ]);
});

Deno.test("omotaiControls() and coverage() match controls as multisets", () => {
  const ours = omotaiControls('[e1] "Home" -> /\n- [e2] button "Go"\n[e3] password "PW"');
  assert.equal(ours.length, 3);
  const ref = [
    { cls: "link" as const, name: "home" },
    { cls: "link" as const, name: "home" },
    { cls: "button" as const, name: "go" },
  ];
  const c = coverage(ref, ours);
  assert.equal(c.covered, 2);
  assert.deepEqual(c.missing, [{ cls: "link", name: "home" }]);
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 2, 3]), 2.5);
});

Deno.test("coverage() lets an unnamed Playwright control match a leftover of its class", () => {
  const c = coverage(
    [{ cls: "link", name: "" }, { cls: "link", name: "a" }],
    [{ cls: "link", name: "a" }, { cls: "link", name: "hi, i'm nicolas." }],
  );
  assert.equal(c.covered, 2);
  const none = coverage([{ cls: "button", name: "" }], [{ cls: "link", name: "x" }]);
  assert.equal(none.covered, 0);
});

Deno.test("geomean() is the n-th root of the product", () => {
  assert.ok(Math.abs(geomean([1, 4]) - 2) < 1e-12);
  assert.ok(Math.abs(geomean([0.5, 0.125, 1]) - 0.3968502629920499) < 1e-12);
  assert.ok(Number.isNaN(geomean([])));
});
