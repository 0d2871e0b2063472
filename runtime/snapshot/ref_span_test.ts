import assert from "node:assert/strict";
import { expandRefSpan, refSpan } from "./ref_span.ts";

Deno.test("refSpan() writes runs as ranges in the order given", () => {
  assert.equal(refSpan(["e1", "e2", "e3", "e81", "e10", "e11", "e12"]), "e1–e3, e81, e10–e12");
  assert.equal(refSpan(["e4", "e5"]), "e4, e5");
  assert.equal(refSpan([]), "");
});

Deno.test("expandRefSpan() inverts refSpan()", () => {
  const refs = ["e1", "e2", "e3", "e81", "e10", "e11", "e12", "e40", "e41"];
  assert.deepEqual(expandRefSpan(refSpan(refs)), refs);
  assert.deepEqual(expandRefSpan("junk, e5"), ["e5"]);
});
