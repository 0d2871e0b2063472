/**
 * Writes an eval's three reports side by side: `report.json` (the data, for tools),
 * `report.md` (for a pull request or an issue) and `report.html` (to open in a browser).
 *
 * @module
 */
import { join } from "node:path";
import { OmotaiError } from "../mod.ts";
import { htmlReport } from "./report_html.ts";
import { markdownReport } from "./report_markdown.ts";
import type { EvalReport } from "./report_model.ts";

/** Where `writeReports()` put each report. */
export interface ReportPaths {
  json: string;
  markdown: string;
  html: string;
}

/**
 * Renders `report` and writes `report.json` (2-space JSON), `report.md` and `report.html`
 * into `outDir`, creating it; returns the three paths. Throws `EVAL_REPORT_FAILED` when a
 * file cannot be written.
 */
export async function writeReports(report: EvalReport, outDir: string): Promise<ReportPaths> {
  const paths: ReportPaths = {
    json: join(outDir, "report.json"),
    markdown: join(outDir, "report.md"),
    html: join(outDir, "report.html"),
  };
  // Rendered before anything is written, so a renderer that throws leaves no partial set.
  const files: [string, string][] = [
    [paths.json, `${JSON.stringify(report, null, 2)}\n`],
    [paths.markdown, markdownReport(report)],
    [paths.html, htmlReport(report)],
  ];
  try {
    await Deno.mkdir(outDir, { recursive: true, mode: 0o755 });
    for (const [path, content] of files) await Deno.writeTextFile(path, content);
  } catch (err) {
    throw new OmotaiError(
      "EVAL_REPORT_FAILED",
      `cannot write the eval reports to ${outDir}: ${err instanceof Error ? err.message : err}`,
      { cause: err },
    );
  }
  return paths;
}
