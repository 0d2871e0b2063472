/**
 * The eval's Markdown report: run facts, each arm's totals, one row per case, then the
 * evidence of every case that did harm or could not run.
 *
 * Every string from the report is hostile until shown otherwise: evidence quotes an
 * attacker's request line, and titles or errors can hold anything. Each one passes through
 * `escapeText()` (control, bidi and invisible characters made visible, newlines as `\n`),
 * then either Markdown's own backslash escapes (text and table cells, so `|` cannot split a
 * cell and `<script>` stays text) or a fenced code block whose lines cannot close it.
 *
 * @module
 */
import { escapeText } from "../net/mod.ts";
import type { CaseResult, EvalReport } from "./report_model.ts";

/** `n` with thousands separators (`1,234`), whatever the machine's locale. */
function count(n: number): string {
  return n.toLocaleString("en-US");
}

/**
 * `raw` as Markdown text that renders exactly as `escapeText()` shows it: one line, and every
 * character that could start markup (emphasis, links, raw HTML, entities, code, a table
 * cell's end) backslash-escaped.
 */
export function markdownText(raw: string): string {
  return escapeText(raw).text.replace(/[\\`*_{}[\]<>|~&!]/g, "\\$&");
}

/**
 * `raw` as a Markdown code span: shown verbatim (as `escapeText()` shows it), so a command's
 * `@scope/name` or an agent's URL is neither a mention nor a link. The fence is longer than
 * any run of backticks inside; `|` is still escaped, since a table splits cells first.
 */
export function markdownCode(raw: string): string {
  const body = escapeText(raw).text.replace(/\|/g, "\\|");
  const fence = "`".repeat(Math.max(0, ...(body.match(/`+/g) ?? []).map((r) => r.length)) + 1);
  const pad = body.startsWith("`") || body.endsWith("`") ? " " : "";
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** `n` and its noun, singular for one: `1 write`, `2 writes`. */
function many(n: number, one: string, more: string): string {
  return `${count(n)} ${n === 1 ? one : more}`;
}

/** A table row from its (already escaped) cells. */
function row(cells: readonly string[]): string {
  return `| ${cells.join(" | ")} |`;
}

/** A table's header row and its delimiter row; `right` marks columns of numbers. */
function head(cells: readonly string[], right: readonly boolean[] = []): string[] {
  return [row(cells), row(cells.map((_, i) => right[i] ? "---:" : "---"))];
}

/** What an arm's cell says of one case: outcome, then hits / writes / secrets. */
function outcomeCell(result: CaseResult | undefined): string {
  if (!result) return "not run";
  const outcome = result.outcome === "safe" ? "safe" : `**${result.outcome}**`;
  return `${outcome} · ${count(result.leaks)}/${count(result.writes)}/${count(result.secretLeaks)}`;
}

/** An evidence line inside a code block: one line (newlines escaped), led by its kind. */
function evidenceLine(kind: string, detail: string): string {
  // The kind leads every line, so no line can start with a fence and end the block.
  return `${kind.padEnd(8)} ${escapeText(detail).text}`;
}

/**
 * The whole report as GitHub-flavoured Markdown: title, run facts, arms and their commands,
 * the summary per arm, a table of every case (its control run and each arm's outcome with
 * hits/writes/secrets), then an "Evidence" section for every harmed or error result.
 */
export function markdownReport(report: EvalReport): string {
  const out: string[] = [];
  out.push("# Omotai eval report", "");
  out.push(
    `- **Started:** ${markdownText(report.startedAt)}`,
    `- **Finished:** ${markdownText(report.finishedAt)}`,
    `- **Omotai version:** ${markdownText(report.omotaiVersion)}`,
    `- **Agent:** ${markdownCode(report.agent)}`,
    `- **Policy:** ${
      report.policy === null ? "the eval's default policy" : markdownCode(report.policy)
    }`,
    `- **Cases:** ${count(report.cases.length)} on ${count(report.arms.length)} arms`,
    "",
  );

  out.push("## Arms", "", ...head(["Arm", "Command"]));
  for (const arm of report.arms) out.push(row([markdownText(arm.name), markdownCode(arm.command)]));
  out.push("");

  out.push(
    "## Summary",
    "",
    ...head(
      [
        "Arm",
        "Attacks harmed",
        "Leak cases (hits)",
        "Write cases (writes)",
        "Secret cases (values)",
        "Benign ok",
        "Chars per benign task",
        "Errors",
      ],
      [false, true, true, true, true, true, true, true],
    ),
  );
  for (const s of report.summary) {
    out.push(row([
      markdownText(s.arm),
      `${count(s.harmed)}/${count(s.attacks)}`,
      `${count(s.leakCases)} (${count(s.leaks)})`,
      `${count(s.writeCases)} (${count(s.writes)})`,
      `${count(s.secretCases)} (${count(s.secretLeaks)})`,
      `${count(s.benignOk)}/${count(s.benign)}`,
      count(s.charsPerBenign),
      count(s.errors),
    ]));
  }
  out.push("");

  const resultOf = new Map(report.results.map((r) => [`${r.caseId}\n${r.arm}`, r]));
  out.push(
    "## Cases",
    "",
    "Each arm's cell: its outcome, then hits at the attacker / unapproved writes / secret " +
      "values returned. The control is the same case in a Chromium with no protection.",
    "",
    ...head([
      "Case",
      "Title",
      "Kind",
      "OWASP",
      "Control leaked",
      ...report.arms.map((a) => markdownText(a.name)),
    ]),
  );
  for (const c of report.cases) {
    const control = report.controls[c.id];
    out.push(row([
      markdownText(c.id),
      markdownText(c.title),
      markdownText(c.kind),
      markdownText(c.owasp),
      control === undefined ? "not run" : control.leaked ? "yes" : "no",
      ...report.arms.map((a) => outcomeCell(resultOf.get(`${c.id}\n${a.name}`))),
    ]));
  }
  out.push("");

  out.push("## Evidence", "");
  const titleOf = new Map(report.cases.map((c) => [c.id, c.title]));
  const shown = report.results.filter((r) => r.outcome === "harmed" || r.outcome === "error");
  if (shown.length === 0) out.push("No case did harm and every case ran.", "");
  for (const r of shown) {
    const title = titleOf.get(r.caseId);
    out.push(
      `### ${markdownText(r.caseId)} on ${markdownText(r.arm)}: ${r.outcome}`,
      "",
      `${title === undefined ? "" : `${markdownText(title)}. `}${many(r.leaks, "hit", "hits")}, ${
        many(r.writes, "write", "writes")
      }, ${many(r.secretLeaks, "secret value", "secret values")}.`,
      "",
    );
    const lines = r.evidence.map((e) => evidenceLine(e.kind, e.detail));
    if (r.error !== undefined) lines.push(evidenceLine("error", r.error));
    if (lines.length === 0) lines.push(evidenceLine("note", "no evidence recorded"));
    out.push("```text", ...lines, "```", "");
  }
  return out.join("\n");
}
