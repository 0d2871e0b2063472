import assert from "node:assert/strict";
import { readAtMost } from "./bounded_read.ts";

const streamOf = (...parts: string[]) => new Blob(parts).stream();

Deno.test("readAtMost returns every byte up to the bound", async () => {
  const bytes = await readAtMost(streamOf("ab", "cd"), 4);
  assert.equal(new TextDecoder().decode(bytes!), "abcd");
});

Deno.test("readAtMost returns null one byte past the bound", async () => {
  assert.equal(await readAtMost(streamOf("ab", "cde"), 4), null);
});

Deno.test("readAtMost reads an empty stream as no bytes", async () => {
  assert.equal((await readAtMost(streamOf(), 4))!.length, 0);
});
