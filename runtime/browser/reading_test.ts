import assert from "node:assert/strict";
import { articleOf, MAX_READ_CHARS } from "./reading.ts";

Deno.test("articleOf() takes only the shape the reader returns", () => {
  assert.equal(articleOf(null), "failed");
  assert.equal(articleOf("text"), "failed");
  assert.equal(articleOf({ title: "T" }), "failed");
  assert.equal(articleOf({ none: true }), "none");
  assert.equal(articleOf({ title: "T", lines: [], cut: false }), "none");
  assert.deepEqual(articleOf({ title: "T", lines: ["a", 3, { b: 1 }, "c"], cut: false }), {
    title: "T",
    lines: ["a", "c"],
    cut: false,
  });
  assert.deepEqual(articleOf({ title: 7, lines: ["a"], cut: "yes" }), {
    title: "",
    lines: ["a"],
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
