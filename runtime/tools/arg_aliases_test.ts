import assert from "node:assert/strict";
import { normalizeArgs } from "./arg_aliases.ts";

Deno.test("normalizeArgs() renames Playwright 0.0.83's target names to ours", () => {
  assert.deepEqual(normalizeArgs({ target: "e3", element: "Buy" }), { ref: "e3", element: "Buy" });
  assert.deepEqual(normalizeArgs({ startTarget: "e1", endTarget: "e2" }), {
    startRef: "e1",
    endRef: "e2",
  });
  assert.deepEqual(
    normalizeArgs({ fields: [{ name: "a", type: "textbox", target: "e4", value: "x" }] }),
    { fields: [{ name: "a", type: "textbox", ref: "e4", value: "x" }] },
  );
});

Deno.test("normalizeArgs() keeps both spellings when both are given, and leaves others alone", () => {
  assert.deepEqual(normalizeArgs({ target: "e1", ref: "e2" }), { target: "e1", ref: "e2" });
  assert.deepEqual(normalizeArgs({ ref: "e2", target: "e1" }), { ref: "e2", target: "e1" });
  assert.equal(normalizeArgs("x"), "x");
  assert.equal(normalizeArgs(null), null);
  assert.deepEqual(normalizeArgs({ url: "https://a.test" }), { url: "https://a.test" });
});
