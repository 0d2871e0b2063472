import assert from "node:assert/strict";
import { join } from "node:path";
import { checkReportInBrowser } from "../runtime/eval/report_check.ts";
import { writeReports } from "../runtime/eval/report_files.ts";
import { CHART_METRICS, REPORT_TITLE } from "../runtime/eval/report_html.ts";
import { fixtureReport } from "../runtime/eval/testdata/report_fixture.ts";

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

Deno.test("checkReportInBrowser opens the HTML report without errors or requests", async () => {
  const report = fixtureReport();
  const dir = await Deno.makeTempDir({ prefix: "omotai-eval-report-" });
  try {
    const paths = await writeReports(report, join(dir, "out"));
    assert.deepEqual(paths, {
      json: join(dir, "out", "report.json"),
      markdown: join(dir, "out", "report.md"),
      html: join(dir, "out", "report.html"),
    });
    assert.deepEqual(JSON.parse(await Deno.readTextFile(paths.json)), report);
    assert.ok((await Deno.readTextFile(paths.markdown)).startsWith("# Omotai eval report\n"));

    const screenshot = join(dir, "report.png");
    const seen = await checkReportInBrowser(paths.html, { screenshot });
    assert.equal(seen.title, REPORT_TITLE);
    assert.deepEqual(seen.pageErrors, []);
    assert.deepEqual(seen.requests, []);
    assert.equal(seen.bars, CHART_METRICS.length * report.arms.length);
    assert.equal(seen.cases, report.cases.length);
    assert.ok(seen.width >= 800 && seen.height > 1_000, `${seen.width}×${seen.height}`);
    const png = await Deno.readFile(screenshot);
    assert.deepEqual([...png.subarray(0, 8)], PNG_SIGNATURE);
    assert.ok(png.length > 10_000, `a ${png.length}-byte PNG`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkReportInBrowser reports a script, a console error and a request", async () => {
  const dir = await Deno.makeTempDir({ prefix: "omotai-eval-report-" });
  try {
    // What an escaping bug would let through: the check must see it, in a page without CSP.
    const page = join(dir, "bad.html");
    await Deno.writeTextFile(
      page,
      `<!doctype html><title>bad</title><div class="bar"></div>
<script>console.error("boom"); fetch("http://127.0.0.1:9/x").catch(() => {});
throw new Error("thrown");</script>`,
    );
    const seen = await checkReportInBrowser(page, {});
    assert.equal(seen.title, "bad");
    assert.equal(seen.bars, 1);
    assert.equal(seen.cases, 0);
    assert.ok(seen.pageErrors.some((e) => e.includes("boom")), seen.pageErrors.join("\n"));
    assert.ok(seen.pageErrors.some((e) => e.includes("thrown")), seen.pageErrors.join("\n"));
    assert.deepEqual(seen.requests, ["http://127.0.0.1:9/x"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkReportInBrowser throws EVAL_REPORT_FAILED for a missing file", async () => {
  await assert.rejects(
    checkReportInBrowser("/nonexistent/omotai/report.html", {}),
    (err: Error & { code?: string }) => err.code === "EVAL_REPORT_FAILED",
  );
});
