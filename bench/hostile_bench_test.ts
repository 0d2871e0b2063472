import assert from "node:assert/strict";
import {
  answeredHealthy,
  BENCH_PAGES,
  dialogInTheWay,
  type HostileRow,
  latencyCell,
  markdownTable,
  parseArgs,
  recoveryCell,
  tabsListed,
  windowsNote,
} from "./hostile_bench.ts";
import { timings } from "./scale_bench.ts";

function row(over: Partial<HostileRow> = {}): HostileRow {
  return {
    page: "/memory",
    system: "omotai",
    hostile: { ms: 12_345, isError: true, text: "error: PAGE_UNRESPONSIVE" },
    dwellMs: 0,
    recoveredMs: 2_500,
    recoveryCalls: 1,
    dialogsAnswered: 0,
    baseline: timings([100, 120, 140, 900], 4),
    during: timings([200, 300, 400], 4),
    duringAllP95Ms: 60_000,
    browserPeakKiB: 2048 * 1024,
    browserBeforeKiB: 300 * 1024,
    groupPeakBytes: 1536 * 2 ** 20,
    groupLimitBytes: 2304 * 2 ** 20,
    survived: true,
    loadStart: [1, 1, 1],
    loadEnd: [2, 2, 2],
    failures: [],
    ...over,
  };
}

Deno.test("BENCH_PAGES: the site's first hostile pages, the log flood, the dialog chain and the popup flood; not the healthy page or a part of a page", () => {
  const paths = BENCH_PAGES.map((p) => p.path);
  assert.deepEqual(paths, [
    "/memory",
    "/workers",
    "/deep-dom",
    "/log-flood",
    "/chain",
    "/popup-flood",
    "/popup-hang-flood",
  ]);
  assert.ok(BENCH_PAGES.every((p) => p.does.length > 0));
  // The floods do their harm after their load: A stays on them; the others do theirs as they
  // load (the chain's harm is in the answers it asks for).
  assert.deepEqual(BENCH_PAGES.filter((p) => p.dwellMs > 0).map((p) => p.path), [
    "/log-flood",
    "/popup-flood",
    "/popup-hang-flood",
  ]);
  assert.deepEqual(BENCH_PAGES.filter((p) => p.opensWindows).map((p) => p.path), [
    "/popup-flood",
    "/popup-hang-flood",
  ]);
});

Deno.test("parseArgs: every page by default, --pages in both spellings in site order, --only, --json, bad input", () => {
  assert.deepEqual(parseArgs([]).pages, [...BENCH_PAGES]);
  assert.deepEqual(
    parseArgs(["--pages", "/deep-dom,/memory"]).pages.map((p) => p.path),
    ["/memory", "/deep-dom"],
  );
  assert.deepEqual(parseArgs(["--pages=/workers"]).pages.map((p) => p.path), ["/workers"]);
  assert.throws(() => parseArgs(["--pages", "/nope"]), /not: \/nope/);
  assert.throws(() => parseArgs(["--pages", ""]), /--pages takes paths/);
  assert.equal(parseArgs(["--only", "playwright-mcp"]).only, "playwright-mcp");
  assert.throws(() => parseArgs(["--only", "chrome"]), /omotai or playwright-mcp/);
  assert.equal(parseArgs(["--json", "/tmp/x.json"]).json, "/tmp/x.json");
  assert.throws(() => parseArgs(["--json"]), /needs a value/);
  assert.throws(() => parseArgs(["--what"]), /unknown argument/);
});

Deno.test("recoveryCell: seconds, marked past 30 s; '> 60 s' when it did not answer; 'never' when the process died", () => {
  assert.equal(recoveryCell({ recoveredMs: 2_500, survived: true }), "2.5 s");
  assert.equal(recoveryCell({ recoveredMs: 31_000, survived: true }), "31.0 s (over 30 s)");
  assert.equal(recoveryCell({ recoveredMs: undefined, survived: true }), "> 60 s");
  assert.equal(recoveryCell({ recoveredMs: undefined, survived: false }), "never");
});

Deno.test("latencyCell: p50 / p95 of the ok calls (scale_bench's percentile), ok/total when some failed", () => {
  assert.equal(latencyCell(timings([100, 120, 140, 900], 4)), "120 / 900 ms (4)");
  assert.equal(latencyCell(timings([200, 300, 400], 4)), "300 / 400 ms (3/4 ok)");
  assert.equal(latencyCell(timings([], 0)), "–");
  assert.equal(latencyCell(timings([], 3)), "– / – ms (0/3 ok)");
});

Deno.test("markdownTable: one line per page and system, Omotai's group peak, the peer's shared browser, failures", () => {
  const table = markdownTable([
    row(),
    row({
      system: "playwright-mcp",
      recoveredMs: undefined,
      survived: false,
      dialogsAnswered: 12,
      groupPeakBytes: undefined,
      groupLimitBytes: undefined,
      hostile: { ms: 120_000, isError: true, text: "thrown: timeout" },
    }),
    row({ page: "/workers", error: "A warm-up: refused" }),
    row({ page: "/log-flood", hostile: { ms: 600, isError: false, text: "" }, dwellMs: 30_000 }),
    row({
      page: "/popup-flood",
      hostile: { ms: 900, isError: false, text: "" },
      dwellMs: 30_000,
      windows: { popupsRan: 19, maxAlive: 20, tabsListed: 20 },
    }),
  ]);
  const lines = table.split("\n");
  assert.equal(lines.length, 7);
  const cols = (l: string) => l.split(" | ").length;
  assert.ok(lines.every((l) => cols(l) === cols(lines[0])), table);
  assert.match(
    lines[2],
    /^\| \/memory \| Omotai \| 12\.3 s \(error\) \| 2\.5 s \| 120 \/ 900 ms \(4\) \| 300 \/ 400 ms \(3\/4 ok\) \| 2048 MiB \| 1536 MiB of 2304 MiB \| yes \|$/,
  );
  assert.match(lines[3], /Playwright MCP 0\.0\.83 \| 120\.0 s \(error\) \| never \(12 dialogs/);
  assert.match(lines[3], /– \(one shared browser\) \| no \|$/);
  assert.match(lines[4], /^\| \/workers \| Omotai \| failed: A warm-up: refused \| – \|/);
  assert.match(lines[5], /^\| \/log-flood \| Omotai \| 0\.6 s, then 30 s on the page \| 2\.5 s \|/);
  assert.match(
    lines[6],
    /^\| \/popup-flood \| Omotai \| 0\.9 s, then 30 s on the page; 19 popups ran, at most 20 pages at once, 20 tabs listed after \| 2\.5 s \|/,
  );
});

Deno.test("windowsNote / tabsListed: the census's counts and the tabs either system lists; '?' when its answer said none", () => {
  assert.equal(
    windowsNote({ popupsRan: 60, maxAlive: 61, tabsListed: undefined }),
    "60 popups ran, at most 61 pages at once, ? tabs listed after",
  );
  assert.equal(tabsListed("20 tab(s)\n<<<untrusted-tabs abc>>>\n0: Healthy"), 20);
  assert.equal(
    tabsListed(
      "### Open tabs\n- 0: (current) [Healthy](http://127.0.0.1:1/healthy)\n- 1: [popup](http://127.0.0.2:2/popup?i=1)\n- 2: [popup](http://127.0.0.1:1/popup?i=2) [crashed]\n",
    ),
    3,
  );
  assert.equal(tabsListed("### Error\nTimeout"), undefined);
});

Deno.test("dialogInTheWay / answeredHealthy: a dialog naming browser_handle_dialog; the healthy page, never an error", () => {
  assert.equal(
    dialogInTheWay(
      `### Modal state\n- ["alert" dialog with message "step 1"]: can be handled by the "browser_handle_dialog" tool`,
    ),
    true,
  );
  assert.equal(
    dialogInTheWay(
      `dialog open: confirm on tab 0; answer with browser_handle_dialog {"accept": true} or {"accept": false}`,
    ),
    true,
  );
  assert.equal(dialogInTheWay("error: BROWSER_TIMEOUT (navigation took too long)"), false);
  assert.equal(answeredHealthy({ text: "# Healthy page\nall calm here", isError: false }), true);
  assert.equal(
    answeredHealthy({
      text: "### Page\n- Page URL: http://127.0.0.1:1/healthy\n- Page Title: Healthy\n### Snapshot",
      isError: false,
    }),
    true,
  );
  assert.equal(answeredHealthy({ text: "# Healthy page", isError: true }), false);
  assert.equal(
    answeredHealthy({ text: "### Error\nTimeout\n- Page Title: Healthy", isError: false }),
    false,
  );
  assert.equal(answeredHealthy({ text: "# Memory", isError: false }), false);
});
