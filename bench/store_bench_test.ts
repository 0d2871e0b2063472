import assert from "node:assert/strict";
import { type ACTION, load, table } from "./store_bench.ts";

Deno.test("load() runs every session's loop for the time given and times each append", async () => {
  const seen: string[] = [];
  const sessions = [0, 1, 2].map((i) => (e: typeof ACTION) => {
    seen.push(`${i}:${e.kind}`);
    return new Promise((r) => setTimeout(r, 5));
  });
  const r = await load(sessions, 0.1);
  assert.ok(r.rows >= 6, `${r.rows} rows`);
  assert.equal(r.latencies.length, r.rows);
  assert.ok(r.latencies.every((ms) => ms >= 4), r.latencies.join());
  assert.deepEqual(new Set(seen.map((s) => s.split(":")[0])), new Set(["0", "1", "2"]));
  const batched = await load([() => Promise.resolve()], 0.02, 5);
  assert.equal(batched.rows, batched.latencies.length * 5);
});

Deno.test("table() writes one markdown row per measurement", () => {
  const text = table([{
    store: "postgres",
    shape: "4 runtimes × 10 sessions, one tenant",
    rows: 12_000,
    seconds: 5,
    rowsPerSecond: 2400.4,
    p50Ms: 1.234,
    p99Ms: 9.876,
  }]);
  assert.match(
    text,
    /\| postgres \| 4 runtimes × 10 sessions, one tenant \| 12000 \| 2400 \| 1\.23 ms \| 9\.88 ms \|/,
  );
});
