import assert from "node:assert/strict";
import {
  failedRow,
  isChromium,
  markdownTable,
  pagesFor,
  parseArgs,
  percentile,
  pickHeld,
  type Responsiveness,
  responsivenessTable,
  SCALE_PAGES,
  type SystemRow,
  timings,
} from "./scale_bench.ts";

Deno.test("parseArgs: defaults, --sizes in both spellings, --json, --only, and bad input", () => {
  assert.deepEqual(parseArgs([]), { sizes: [1, 5, 10, 20], responsiveness: 20 });
  assert.deepEqual(parseArgs(["--sizes", "1,2", "--json", "/tmp/x.json"]), {
    sizes: [1, 2],
    json: "/tmp/x.json",
    responsiveness: 2,
  });
  assert.deepEqual(parseArgs(["--sizes=10"]).sizes, [10]);
  assert.throws(() => parseArgs(["--sizes", "0,2"]));
  assert.throws(() => parseArgs(["--sizes", "a"]));
  assert.throws(() => parseArgs(["--json"]));
  assert.throws(() => parseArgs(["--what"]));
  assert.equal(parseArgs(["--only", "omotai"]).only, "omotai");
  assert.equal(parseArgs(["--only=playwright-mcp"]).only, "playwright-mcp");
  assert.throws(() => parseArgs(["--only", "chrome"]), /omotai or playwright-mcp/);
});

Deno.test("pagesFor: three pages in order, rotated by session", () => {
  assert.deepEqual(pagesFor(0), SCALE_PAGES.slice(0, 3));
  assert.deepEqual(pagesFor(1), SCALE_PAGES.slice(1, 4));
  assert.deepEqual(pagesFor(4), [SCALE_PAGES[4], SCALE_PAGES[0], SCALE_PAGES[1]]);
  // Five sessions start on five different pages.
  assert.deepEqual(new Set([0, 1, 2, 3, 4].map((i) => pagesFor(i)[0])).size, 5);
});

Deno.test("percentile: nearest rank, unsorted input, empty is NaN", () => {
  assert.deepEqual(percentile([5, 1, 3], 50), 3);
  assert.deepEqual(percentile([1, 2, 3, 4], 50), 2);
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
  assert.deepEqual(percentile(hundred, 95), 95);
  assert.deepEqual(percentile([7], 95), 7);
  assert.ok(Number.isNaN(percentile([], 50)));
});

Deno.test("isChromium: by comm or by argv0's name, not bwrap, socat or node", () => {
  assert.deepEqual(isChromium({ comm: "chromium", argv: ["/usr/lib/chromium/chromium"] }), true);
  assert.deepEqual(isChromium({ comm: "chrome_crashpad", argv: [] }), true);
  assert.deepEqual(isChromium({ comm: "headless_shell", argv: [] }), true);
  assert.deepEqual(isChromium({ comm: "bwrap", argv: ["bwrap"] }), false);
  assert.deepEqual(isChromium({ comm: "socat", argv: ["/usr/bin/socat"] }), false);
  assert.deepEqual(isChromium({ comm: "node", argv: ["node"] }), false);
});

Deno.test("markdownTable: the issue's header, one line per size, failed systems marked", () => {
  const row: SystemRow = {
    ...failedRow("omotai", 2, ""),
    error: undefined,
    ok: 6,
    total: 6,
    p50Ms: 1500.4,
    p95Ms: 3000,
    browserPssKiB: 2 * 300 * 1024,
    browserPssPerSessionKiB: 300 * 1024,
    leftAfter2s: 0,
    firstNavigateP50Ms: 2000,
  };
  const table = markdownTable([
    { sessions: 2, omotai: row, peer: failedRow("playwright-mcp", 2, "no npm") },
  ]).split("\n");
  assert.deepEqual(table.length, 3);
  assert.deepEqual(
    table[0],
    "| sessions | Omotai: ok | p50 / p95 | PSS per session | left after 2 s | first navigate p50 " +
      "| Playwright MCP: ok | p50 / p95 | PSS per session | left after 2 s | first navigate p50 |",
  );
  assert.deepEqual(
    table[2],
    "| 2 | 6/6 | 1500 / 3000 ms | 300 MiB | 0 | 2000 ms | failed: no npm | – | – | – | – |",
  );
});

Deno.test("parseArgs: --responsiveness defaults to the largest size, 0 skips, bad input", () => {
  assert.deepEqual(parseArgs(["--sizes", "10,2"]).responsiveness, 10);
  assert.deepEqual(parseArgs(["--sizes", "2", "--responsiveness", "10"]).responsiveness, 10);
  assert.deepEqual(parseArgs(["--responsiveness=0"]).responsiveness, 0);
  assert.throws(() => parseArgs(["--responsiveness", "-1"]));
  assert.throws(() => parseArgs(["--responsiveness", "x"]));
  assert.throws(() => parseArgs(["--responsiveness"]));
});

Deno.test("timings: p50 / p95 of the ok samples out of the tried, rounded samples kept", () => {
  const t = timings([30, 10.04, 20], 4);
  assert.deepEqual(t, { samplesMs: [30, 10, 20], ok: 3, total: 4, p50Ms: 20, p95Ms: 30 });
  const none = timings([], 5);
  assert.deepEqual([none.ok, none.total], [0, 5]);
  assert.ok(Number.isNaN(none.p50Ms));
});

Deno.test("pickHeld: the first pending POST to the form's origin not seen before", () => {
  const a = (id: string, origin = "http://127.0.0.1:5", method = "POST", state = "pending") => ({
    id,
    origin,
    method,
    state,
  });
  const list = [a("x", "http://127.0.0.1:6"), a("y", undefined, "PUT"), a("z"), a("w")];
  assert.deepEqual(pickHeld(list, "http://127.0.0.1:5")?.id, "z");
  assert.deepEqual(pickHeld(list, "http://127.0.0.1:5", new Set(["z"]))?.id, "w");
  assert.deepEqual(
    pickHeld([a("v", undefined, "POST", "approved")], "http://127.0.0.1:5"),
    undefined,
  );
  assert.deepEqual(pickHeld([], "http://127.0.0.1:5"), undefined);
});

Deno.test("responsivenessTable: three figures, idle beside busy, failures counted", () => {
  const phase = (busySessions: number, ms: number) => ({
    busySessions,
    loadStart: [1, 1, 1],
    loadEnd: [2, 2, 2],
    verdict: timings([ms, 2 * ms], 2),
    shown: timings([3 * ms], 2),
    released: timings([4 * ms], 1),
    failures: [],
  });
  const r: Responsiveness = { sessions: 10, idle: phase(0, 10), busy: phase(10, 100) };
  assert.deepEqual(responsivenessTable(r).split("\n"), [
    "| at 10 busy sessions | idle p50 / p95 | busy p50 / p95 |",
    "| --- | --- | --- |",
    "| verdict (denied navigate) | 10 / 20 ms (2) | 100 / 200 ms (2) |",
    "| approval shown to operator | 30 / 30 ms (1/2 ok) | 300 / 300 ms (1/2 ok) |",
    "| approved write released | 40 / 40 ms (1) | 400 / 400 ms (1) |",
  ]);
  const failed = responsivenessTable({ sessions: 2, error: "boom" }).split("\n");
  assert.deepEqual(failed[2], "| verdict (denied navigate) | – | – |");
});
