import assert from "node:assert/strict";
import { TabLogs } from "./tab_logs.ts";

Deno.test("TabLogs.write() forgets the least recently written tab past its bound", () => {
  const forgotten: string[][] = [];
  const logs = new TabLogs<string[]>({
    max: 2,
    create: () => [],
    onForget: (r) => forgotten.push(r),
  });
  logs.write("a").push("a1");
  logs.write("b").push("b1");
  // Written again, "a" is now more recent than "b"; reading "b" does not change that.
  logs.write("a").push("a2");
  assert.deepEqual(logs.get("b"), ["b1"]);
  logs.write("c").push("c1");
  assert.equal(logs.get("b"), undefined);
  assert.deepEqual(logs.get("a"), ["a1", "a2"]);
  assert.deepEqual(logs.get("c"), ["c1"]);
  assert.deepEqual(forgotten, [["b1"]]);
});

Deno.test("TabLogs.forget() drops a tab once and tells onForget", () => {
  const forgotten: number[][] = [];
  const logs = new TabLogs<number[]>({
    max: 4,
    create: () => [],
    onForget: (r) => forgotten.push(r),
  });
  logs.write("t").push(1);
  logs.forget("t");
  logs.forget("t");
  assert.equal(logs.get("t"), undefined);
  assert.deepEqual(forgotten, [[1]]);
  // A tab written after it was forgotten starts empty.
  assert.deepEqual(logs.write("t"), []);
});
