import assert from "node:assert/strict";
import { articleOf, MAX_READ_CHARS } from "./reading.ts";

Deno.test("articleOf() takes only the shape the reader returns", () => {
  assert.equal(articleOf(null), "failed");
  assert.equal(articleOf("text"), "failed");
  assert.equal(articleOf({ title: "T" }), "failed");
  assert.equal(articleOf({ none: true }), "none");
  assert.equal(articleOf({ title: "T", lines: [], cut: false }), "none");
  // Links point into the lines by index: a line of another shape fails the answer.
  assert.equal(articleOf({ title: "T", lines: ["a", 3, "c"], cut: false }), "failed");
  assert.deepEqual(articleOf({ title: 7, lines: ["a"], cut: "yes" }), {
    title: "",
    lines: ["a"],
    links: [],
    cut: false,
  });
});

Deno.test("articleOf() keeps only links of the right shape, on lines that exist, in order", () => {
  const got = articleOf({
    title: "T",
    lines: ["a", "b", "c"],
    links: [
      { line: 0, href: "http://x.test/1", element: 3 },
      { line: 2, href: "http://x.test/2", element: "4" },
      { line: 1, href: "http://x.test/3" },
      { line: 9, href: "http://x.test/4" },
      { line: "2", href: "http://x.test/5" },
      { line: 2, href: 5 },
      null,
      { line: 2, href: `http://x.test/${"y".repeat(5_000)}`, element: -7 },
    ],
    cut: false,
  });
  assert.ok(typeof got === "object");
  assert.deepEqual(got.links.map((l) => [l.href.slice(0, 15), l.element]), [
    ["http://x.test/1", 3],
    ["http://x.test/2", -1],
    ["http://x.test/y", -1],
  ]);
  assert.equal(got.links[2].href.length, 4_096);
  assert.deepEqual(articleOf({ title: "T", lines: ["a"], links: "x", cut: false }), {
    title: "T",
    lines: ["a"],
    links: [],
    cut: false,
  });
});

Deno.test("articleOf() bounds the text again, whatever came back, and says it cut it", () => {
  const line = "x".repeat(100_000);
  const got = articleOf({ title: "T", lines: Array(30).fill(line), cut: false });
  assert.ok(typeof got === "object");
  const total = got.lines.reduce((n, l) => n + l.length + 1, 0);
  assert.ok(total <= MAX_READ_CHARS, `${total}`);
  assert.equal(got.cut, true);
});
