import assert from "node:assert/strict";
import { readBoundedLines } from "./bounded_lines.ts";

/** A stream of `pieces`, each its own chunk. */
function streamOf(pieces: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return ReadableStream.from(pieces.map((p) => enc.encode(p)));
}

Deno.test("readBoundedLines() hands on lines split across chunks, and no unfinished last line", async () => {
  const lines: string[] = [];
  let overlong = 0;
  await readBoundedLines(streamOf(["a", "b\nc", "d\n\nlast"]), {
    max: 10,
    onLine: (l) => lines.push(l),
    onOverlong: () => overlong++,
  });
  assert.deepEqual(lines, ["ab", "cd", ""]);
  assert.equal(overlong, 0);
});

Deno.test("readBoundedLines() drops a line over max as it streams in and reads on after it", async () => {
  const lines: string[] = [];
  let overlong = 0;
  await readBoundedLines(streamOf(["ok\nxxxx", "xxxx", "xxxx\nnext\n", "12345\n"]), {
    max: 5,
    onLine: (l) => lines.push(l),
    onOverlong: () => overlong++,
  });
  assert.deepEqual(lines, ["ok", "next", "12345"]);
  assert.equal(overlong, 1);
});

Deno.test("readBoundedLines() keeps a character split across chunks whole", async () => {
  const bytes = new TextEncoder().encode("é\n");
  const lines: string[] = [];
  await readBoundedLines(ReadableStream.from([bytes.slice(0, 1), bytes.slice(1)]), {
    max: 5,
    onLine: (l) => lines.push(l),
    onOverlong: () => {},
  });
  assert.deepEqual(lines, ["é"]);
});
