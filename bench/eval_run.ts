/**
 * `deno task eval`: the whole catalogue through Omotai (the eval's default policy) and
 * Playwright MCP 0.0.83 (headless, isolated, the system Chromium) in one run, with the
 * scripted agent; the report goes to runs/eval/, its Markdown to docs/eval-results.md and a
 * screenshot of its HTML, taken in a real headless Chromium, to docs/eval-report.png.
 *
 * `deno run -A bench/eval_run.ts [--only CASES] [--no-docs]`
 *
 * @module
 */
import { parseArgs } from "node:util";
import { runEval } from "../runtime/eval/runner.ts";
import { scriptedAgent } from "../runtime/eval/scripted_agent.ts";
import { stdioArm } from "../runtime/eval/arms.ts";
import { progressLine, textTable } from "../runtime/eval/report_text.ts";
import { writeReports } from "../runtime/eval/report_files.ts";
import { checkReportInBrowser } from "../runtime/eval/report_check.ts";
import { ensurePeerInstalled, peerCommand, PLAYWRIGHT_MCP_VERSION } from "./peer.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { only: { type: "string" }, "no-docs": { type: "boolean", default: false } },
});
const root = new URL("../", import.meta.url).pathname;
const out = `${root}runs/eval`;
const peer = peerCommand(await ensurePeerInstalled());
const peerCwd = await Deno.makeTempDir({ prefix: "omotai-eval-peer-" });
try {
  const report = await runEval({
    omotaiEntry: new URL("../runtime/cli/main.ts", import.meta.url),
    arms: [
      stdioArm(
        "playwright",
        { command: peer.command, args: peer.args, cwd: peerCwd },
        `npx @playwright/mcp@${PLAYWRIGHT_MCP_VERSION} ${
          peer.args.slice(1).join(" ").replace(
            /--executable-path \S+/,
            "--executable-path chromium",
          )
        }`,
      ),
    ],
    only: values.only,
    workDir: `${out}/.work`,
    agent: scriptedAgent(),
    onControl: (id, result, done, total) =>
      console.log(`[control ${done}/${total}] ${id} ${result.leaked ? "leaks" : "DID NOT LEAK"}`),
    onResult: (info, result, done, total) => console.log(progressLine(info, result, done, total)),
  });
  const paths = await writeReports(report, out);
  console.log(`\n${textTable(report)}\n\nreport: ${paths.html}`);
  if (!values["no-docs"]) {
    const check = await checkReportInBrowser(paths.html, {
      screenshot: `${root}docs/eval-report.png`,
    });
    if (check.pageErrors.length > 0 || check.requests.length > 0) {
      throw new Error(`the report did not render cleanly: ${JSON.stringify(check)}`);
    }
    await Deno.writeTextFile(
      `${root}docs/eval-results.md`,
      await Deno.readTextFile(paths.markdown),
    );
    console.log("docs/eval-results.md and docs/eval-report.png written");
  }
} finally {
  await Deno.remove(peerCwd, { recursive: true }).catch(() => {});
  await Deno.remove(`${out}/.work`, { recursive: true }).catch(() => {});
}
