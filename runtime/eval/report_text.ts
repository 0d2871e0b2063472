/**
 * The eval's terminal output: a table of each arm's totals, and the line printed as each case
 * finishes. Plain ASCII columns, no colours, so it reads the same in a log file or CI output.
 * Every string from the report passes through `escapeText()`: an arm's error message can
 * quote a page, and a control character in it must not move the terminal's cursor.
 *
 * @module
 */
import { escapeText } from "../net/mod.ts";
import type { ArmSummary, CaseInfo, CaseResult, EvalReport } from "./report_model.ts";

/** `n` with thousands separators (`1,234`), whatever the machine's locale. */
function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** A report string made safe for a terminal: control, bidi and invisible characters escaped. */
function shown(raw: string): string {
  return escapeText(raw).text;
}

/** The table's columns: header, cell, and whether numbers line up on the right. */
const COLUMNS: readonly { head: string; cell: (s: ArmSummary) => string; right: boolean }[] = [
  { head: "arm", cell: (s) => shown(s.arm), right: false },
  { head: "attacks harmed", cell: (s) => `${count(s.harmed)}/${count(s.attacks)}`, right: true },
  {
    head: "leak cases (hits)",
    cell: (s) => `${count(s.leakCases)} (${count(s.leaks)})`,
    right: true,
  },
  {
    head: "write cases (writes)",
    cell: (s) => `${count(s.writeCases)} (${count(s.writes)})`,
    right: true,
  },
  {
    head: "secret cases (values)",
    cell: (s) => `${count(s.secretCases)} (${count(s.secretLeaks)})`,
    right: true,
  },
  { head: "benign ok", cell: (s) => `${count(s.benignOk)}/${count(s.benign)}`, right: true },
  { head: "chars/benign task", cell: (s) => count(s.charsPerBenign), right: true },
  { head: "errors", cell: (s) => count(s.errors), right: true },
];

/**
 * One row per arm with its totals: attacks that did harm, cases with hits at the attacker,
 * unapproved writes, planted secrets returned, benign tasks completed, characters returned
 * per benign task, and cases that could not run. No trailing newline.
 */
export function textTable(report: EvalReport): string {
  const rows = [
    COLUMNS.map((c) => c.head),
    ...report.summary.map((s) => COLUMNS.map((c) => c.cell(s))),
  ];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => COLUMNS[i].right ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))
      .join("  ").trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(rows[0]), rule, ...rows.slice(1).map(line)].join("\n");
}

/** Longest error text a progress line carries: the full message is in the reports. */
const ERROR_MAX = 80;

/**
 * The line printed when case `info` finishes on an arm: its place in the run, id, arm,
 * outcome, hits, writes, secrets and characters returned, e.g.
 * `[ 3/41] exfil-fetch-post     omotai      safe    0 hits 0 writes 0 secrets  1,234 chars`.
 * An `error` outcome appends its (shortened) message.
 */
export function progressLine(
  info: CaseInfo,
  result: CaseResult,
  done: number,
  total: number,
): string {
  const width = String(total).length;
  const place = `[${String(done).padStart(width)}/${total}]`;
  const parts = [
    place,
    shown(info.id).padEnd(20),
    shown(result.arm).padEnd(11),
    result.outcome.padEnd(7),
    `${count(result.leaks)} hits ${count(result.writes)} writes ${
      count(result.secretLeaks)
    } secrets`,
    `${count(result.chars).padStart(6)} chars`,
  ];
  let line = parts.join(" ");
  if (result.outcome === "error" && result.error) {
    const error = shown(result.error);
    line += `  ${error.length > ERROR_MAX ? `${error.slice(0, ERROR_MAX - 3)}...` : error}`;
  }
  return line;
}
