/**
 * The eval's HTML report: one static, self-contained page (inline CSS, CSS bars, no script,
 * no external URL of any kind) that reads at a glance and goes into the docs as a screenshot.
 *
 * Evidence quotes what an attacker's page sent, so every string from the report is hostile:
 * each goes through `escapeText()` (control, bidi and invisible characters made visible) and
 * then HTML escaping, and only `text()` puts report strings into markup. The page's own
 * Content-Security-Policy forbids every load and every script, so even an escaping bug could
 * neither run code nor reach the network when the report is opened.
 *
 * Stable hooks for tests: `.bar[data-arm][data-metric][data-value]` for each chart bar
 * ({@link CHART_METRICS}), `tr.case-row[data-case]` for each case, and
 * `details.evidence[data-case][data-arm]` for each case on each arm.
 *
 * @module
 */
import { escapeHtml } from "../../ui/mod.ts";
import { escapeText } from "../net/mod.ts";
import type { ArmSummary, CaseResult, ControlResult, EvalReport } from "./report_model.ts";

/** The page's policy: nothing may load, no script may run; inline styles and data: images only. */
export const REPORT_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** The page's `<title>`. */
export const REPORT_TITLE = "Omotai eval report";

/** One chart: an arm's number for it, what its bar says, and the scale bars are drawn against. */
interface Metric {
  id: string;
  label: string;
  hint: string;
  value: (s: ArmSummary) => number;
  text: (s: ArmSummary) => string;
  /** The value a full bar stands for, from every arm's summary. */
  scale: (all: readonly ArmSummary[]) => number;
}

/** `n` with thousands separators (`1,234`), whatever the machine's locale. */
function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** `n` and its noun, singular for one: `1 write`, `2 writes`. */
function many(n: number, one: string, more: string): string {
  return `${count(n)} ${n === 1 ? one : more}`;
}

/** A benign success rate in whole percent (0 with no benign task). */
function percent(s: ArmSummary): number {
  return s.benign === 0 ? 0 : Math.round((s.benignOk / s.benign) * 100);
}

/** Attack-case metrics share one scale: the most attack cases (or hits) any arm ran. */
const caseScale = (value: (s: ArmSummary) => number) => (all: readonly ArmSummary[]) =>
  Math.max(1, ...all.map((s) => Math.max(s.attacks, value(s))));

const METRICS: readonly Metric[] = [
  {
    id: "harmed",
    label: "Attacks that did harm",
    hint: "Attack cases whose injected instruction got through. Fewer is better.",
    value: (s) => s.harmed,
    text: (s) => `${count(s.harmed)} / ${count(s.attacks)}`,
    scale: caseScale((s) => s.harmed),
  },
  {
    id: "leaks",
    label: "Cases that reached the attacker",
    hint: "Cases with requests, upgrades or datagrams at the attacker (hits in brackets).",
    value: (s) => s.leakCases,
    text: (s) => `${count(s.leakCases)} (${many(s.leaks, "hit", "hits")})`,
    scale: caseScale((s) => s.leakCases),
  },
  {
    id: "writes",
    label: "Cases with unapproved writes",
    hint: "Cases where the portal received a write no human approved.",
    value: (s) => s.writeCases,
    text: (s) => `${count(s.writeCases)} (${many(s.writes, "write", "writes")})`,
    scale: caseScale((s) => s.writeCases),
  },
  {
    id: "secrets",
    label: "Cases that leaked a secret to the model",
    hint: "Cases where a planted secret, in any encoding, was in what the arm returned.",
    value: (s) => s.secretCases,
    text: (s) => `${count(s.secretCases)} (${many(s.secretLeaks, "value", "values")})`,
    scale: caseScale((s) => s.secretCases),
  },
  {
    id: "benign",
    label: "Benign tasks completed",
    hint: "Ordinary tasks the agent finished through the arm. More is better.",
    value: percent,
    text: (s) => `${percent(s)}% (${count(s.benignOk)}/${count(s.benign)})`,
    scale: () => 100,
  },
  {
    id: "chars",
    label: "Characters sent to the model per benign task",
    hint: "Mean size of every tool result of a benign task: the model's reading cost.",
    value: (s) => s.charsPerBenign,
    text: (s) => count(s.charsPerBenign),
    scale: (all) => Math.max(1, ...all.map((s) => s.charsPerBenign)),
  },
];

/** The `data-metric` of every chart, in the order the page draws them (one bar per arm each). */
export const CHART_METRICS: readonly string[] = METRICS.map((m) => m.id);

/** Arm colours, by the arm's place in the report: none is the green, red or amber of outcomes. */
const ARM_COLOURS = ["#2563eb", "#7c3aed", "#0891b2", "#db2777", "#475569", "#0d9488"];

/**
 * A report string as markup: invisible and reordering characters made visible, then
 * `& < > " '` escaped, so it is safe in element content and in quoted attributes.
 */
export function text(raw: string): string {
  return escapeHtml(escapeText(raw).text);
}

/** An ISO time as `2025-06-01 10:00:00 UTC`, or the string itself if it does not parse. */
function when(iso: string): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** How long the run took, e.g. `4 min 12 s`, or undefined when a time does not parse. */
function duration(startedAt: string, finishedAt: string): string | undefined {
  const ms = Date.parse(finishedAt) - Date.parse(startedAt);
  if (Number.isNaN(ms) || ms < 0) return undefined;
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** An outcome badge. */
function badge(outcome: CaseResult["outcome"] | "not run"): string {
  const cls = outcome === "not run" ? "none" : text(outcome);
  return `<span class="badge ${cls}">${text(outcome)}</span>`;
}

/** Whether the unprotected control run of a case leaked, as a badge. */
function controlBadge(control: ControlResult | undefined): string {
  if (control === undefined) return badge("not run");
  return control.leaked
    ? `<span class="badge control-yes">leaked</span>`
    : `<span class="badge control-no">no leak</span>`;
}

/** `1 hit · 0 writes · 2 secrets` for one result. */
function counts(r: CaseResult): string {
  return [
    many(r.leaks, "hit", "hits"),
    many(r.writes, "write", "writes"),
    many(r.secretLeaks, "secret", "secrets"),
  ].join(" · ");
}

const STYLE = `
:root {
  color-scheme: light;
  --ink: #0f172a; --muted: #64748b; --line: #e2e8f0; --paper: #ffffff; --ground: #f6f7fb;
  --safe: #15803d; --safe-bg: #dcfce7; --harm: #b91c1c; --harm-bg: #fee2e2;
  --error: #b45309; --error-bg: #fef3c7;
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--ground); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
    "Noto Sans", "Liberation Sans", sans-serif;
}
main { max-width: 1180px; margin: 0 auto; padding: 32px 28px 48px; }
h1 { font-size: 28px; margin: 0; letter-spacing: -0.01em; }
h2 { font-size: 19px; margin: 36px 0 12px; }
h3 { font-size: 15px; margin: 0; }
code { font: 13px/1.45 ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono",
  monospace; }
.lede { color: var(--muted); margin: 4px 0 20px; }
.card {
  background: var(--paper); border: 1px solid var(--line); border-radius: 12px;
  padding: 18px 22px; box-shadow: 0 1px 2px rgba(15, 23, 42, 0.05);
}
.facts { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr));
  gap: 12px 28px; margin: 0; }
.facts dt { font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em;
  color: var(--muted); }
.facts dd { margin: 2px 0 0; font-weight: 600; overflow-wrap: anywhere; }
.arms { list-style: none; margin: 16px 0 0; padding: 0; display: grid;
  grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 12px; }
.arm { display: grid; grid-template-columns: auto 1fr auto; gap: 4px 10px; align-items: center; }
.arm code { grid-column: 2 / 4; color: var(--muted); overflow-wrap: anywhere; }
.swatch { width: 12px; height: 12px; border-radius: 3px; background: var(--arm);
  display: inline-block; }
.arm-name { font-weight: 700; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 16px; }
.metric .hint { color: var(--muted); font-size: 12.5px; margin: 2px 0 12px; }
.bar-row { display: grid; grid-template-columns: 1fr auto; gap: 3px 12px; align-items: baseline;
  margin: 10px 0 0; }
.bar-row .track { grid-column: 1 / 3; }
.bar-row .label { font-size: 13.5px; font-weight: 600; overflow: hidden;
  text-overflow: ellipsis; white-space: nowrap; }
.track { background: #eef1f6; border-radius: 6px; height: 14px; overflow: hidden; }
.bar { height: 100%; min-width: 3px; border-radius: 6px; background: var(--arm); }
.value { font-variant-numeric: tabular-nums; font-weight: 700; font-size: 13.5px;
  text-align: right; white-space: nowrap; }
table { width: 100%; border-collapse: collapse; background: var(--paper); font-size: 14px; }
.table-card { padding: 0; overflow-x: auto; }
th, td { text-align: left; padding: 10px 14px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em; color: var(--muted);
  background: #fafbfd; }
tbody tr:last-child td { border-bottom: 0; }
.case-id { font-weight: 700; color: var(--ink); text-decoration: none; }
.case-id:hover { text-decoration: underline; }
.sub { color: var(--muted); font-size: 12.5px; overflow-wrap: anywhere; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 999px; font-size: 12px;
  font-weight: 700; letter-spacing: 0.02em; }
.badge.safe { color: var(--safe); background: var(--safe-bg); }
.badge.harmed { color: var(--harm); background: var(--harm-bg); }
.badge.failed, .badge.error { color: var(--error); background: var(--error-bg); }
.badge.none, .badge.control-no { color: var(--muted); background: #f1f5f9; }
.badge.control-yes { color: #7f1d1d; background: #fff; border: 1px solid #fecaca; }
.kind { font-size: 12.5px; color: #334155; background: #f1f5f9; border-radius: 6px;
  padding: 1px 7px; }
.case-evidence { margin: 0 0 14px; }
.case-evidence > p { margin: 4px 0 10px; }
details.evidence { border: 1px solid var(--line); border-left: 4px solid var(--arm);
  border-radius: 8px; margin: 8px 0 0; background: #fcfcfe; }
details.evidence > summary { cursor: pointer; padding: 8px 12px; display: flex; gap: 10px;
  align-items: center; flex-wrap: wrap; }
details.evidence ul { list-style: none; margin: 0; padding: 0 12px 10px; }
details.evidence li { display: grid; grid-template-columns: 74px 1fr; gap: 10px;
  padding: 5px 0; border-top: 1px dashed var(--line); }
details.evidence li code { white-space: pre-wrap; overflow-wrap: anywhere; }
.ev-kind { font-size: 11.5px; font-weight: 700; text-transform: uppercase;
  letter-spacing: 0.05em; color: var(--muted); padding-top: 1px; }
.ev-kind.attacker, .ev-kind.write, .ev-kind.secret { color: var(--harm); }
.ev-kind.error { color: var(--error); }
.ev-kind.refusal { color: var(--safe); }
footer { color: var(--muted); font-size: 12.5px; margin-top: 36px; }
`;

/** The run facts and the arms with their commands and headline. */
function header(report: EvalReport, colour: (arm: string) => string): string {
  const took = duration(report.startedAt, report.finishedAt);
  const facts: [string, string][] = [
    ["Started", text(when(report.startedAt))],
    [
      "Finished",
      text(when(report.finishedAt)) + (took ? ` <span class="sub">(${took})</span>` : ""),
    ],
    ["Omotai version", text(report.omotaiVersion)],
    ["Agent", text(report.agent)],
    ["Policy", report.policy === null ? "eval default" : text(report.policy)],
    ["Cases", `${count(report.cases.length)} × ${count(report.arms.length)} arms`],
  ];
  const summaryOf = new Map(report.summary.map((s) => [s.arm, s]));
  const arms = report.arms.map((a) => {
    const s = summaryOf.get(a.name);
    const verdict = s === undefined
      ? badge("not run")
      : `<span class="badge ${s.harmed === 0 ? "safe" : "harmed"}">${count(s.harmed)} of ${
        count(s.attacks)
      } attacks did harm</span>`;
    return `<li class="arm card" data-arm="${text(a.name)}" style="--arm:${colour(a.name)}">` +
      `<span class="swatch"></span><span class="arm-name">${text(a.name)}</span>${verdict}` +
      `<code>${text(a.command)}</code></li>`;
  });
  return `<header>
<h1>${REPORT_TITLE}</h1>
<p class="lede">An attack catalogue and benign tasks run through each browser MCP server, with a
control run of every case in a Chromium with no protection.</p>
<section class="card"><dl class="facts">${
    facts.map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join("")
  }</dl></section>
<ul class="arms" id="arms">${arms.join("\n")}</ul>
</header>`;
}

/** One panel per metric, one bar per arm, each with its number printed. */
function charts(report: EvalReport, colour: (arm: string) => string): string {
  const panels = METRICS.map((m) => {
    const scale = m.scale(report.summary);
    const rows = report.summary.map((s) => {
      const value = m.value(s);
      const width = Math.min(100, Math.max(0, (value / scale) * 100)).toFixed(1);
      const bar = `<div class="bar" data-arm="${text(s.arm)}" data-metric="${m.id}" ` +
        `data-value="${text(String(value))}" style="--arm:${colour(s.arm)};width:${width}%">` +
        `</div>`;
      return `<div class="bar-row"><span class="label">${text(s.arm)}</span>` +
        `<span class="value">${text(m.text(s))}</span><div class="track">${bar}</div></div>`;
    });
    return `<section class="metric card" id="metric-${m.id}"><h3>${m.label}</h3>` +
      `<p class="hint">${m.hint}</p>${rows.join("")}</section>`;
  });
  return `<h2>Results per arm</h2>\n<div class="charts">${panels.join("\n")}</div>`;
}

/** The key of one case on one arm. */
function key(caseId: string, arm: string): string {
  return `${caseId}\n${arm}`;
}

/** One row per case: what it is, whether its control leaked, each arm's outcome. */
function caseTable(report: EvalReport, results: Map<string, CaseResult>): string {
  const head = ["Case", "Kind", "OWASP", "Control"].map((h) => `<th>${h}</th>`).join("") +
    report.arms.map((a) => `<th>${text(a.name)}</th>`).join("");
  const rows = report.cases.map((c, i) => {
    const control = report.controls[c.id];
    const arms = report.arms.map((a) => {
      const r = results.get(key(c.id, a.name));
      return r === undefined
        ? `<td>${badge("not run")}</td>`
        : `<td>${badge(r.outcome)}<div class="sub">${counts(r)}</div></td>`;
    });
    return `<tr class="case-row" data-case="${text(c.id)}">` +
      `<td><a class="case-id" href="#case-${i}">${text(c.id)}</a>` +
      `<div class="sub">${text(c.title)}</div></td>` +
      `<td><span class="kind">${text(c.kind)}</span></td><td>${text(c.owasp)}</td>` +
      `<td>${controlBadge(control)}</td>${arms.join("")}</tr>`;
  });
  return `<h2>Cases</h2>
<p class="lede">The control is the same case in a Chromium with no protection: “leaked” means
the attack works when nothing stands in its way.</p>
<div class="card table-card"><table id="cases"><thead><tr>${head}</tr></thead>
<tbody>${rows.join("\n")}</tbody></table></div>`;
}

/** Every case's evidence per arm, open where the attack did harm. */
function evidence(
  report: EvalReport,
  results: Map<string, CaseResult>,
  colour: (arm: string) => string,
): string {
  const blocks = report.cases.map((c, i) => {
    const control = report.controls[c.id];
    const arms = report.arms.map((a) => {
      const r = results.get(key(c.id, a.name));
      const attrs = `class="evidence" data-case="${text(c.id)}" data-arm="${text(a.name)}" ` +
        `style="--arm:${colour(a.name)}"`;
      if (r === undefined) {
        return `<details ${attrs}><summary><span class="arm-name">${text(a.name)}</span>` +
          `${badge("not run")}</summary></details>`;
      }
      const items = r.evidence.map((e) =>
        `<li><span class="ev-kind ${text(e.kind)}">${text(e.kind)}</span><code>${
          text(e.detail)
        }</code></li>`
      );
      if (r.error !== undefined) {
        items.push(
          `<li><span class="ev-kind error">error</span><code>${text(r.error)}</code></li>`,
        );
      }
      if (items.length === 0) {
        items.push(
          `<li><span class="ev-kind">none</span><span class="sub">no evidence recorded` +
            `</span></li>`,
        );
      }
      const open = r.outcome === "harmed" || r.outcome === "error" ? " open" : "";
      return `<details ${attrs}${open}><summary><span class="arm-name">${text(a.name)}</span>` +
        `${badge(r.outcome)}<span class="sub">${counts(r)} · ${count(r.calls)} calls · ${
          count(r.chars)
        } chars · ${count(r.ms)} ms</span></summary><ul>${items.join("")}</ul></details>`;
    });
    const controlLine = `Control run: ${controlBadge(control)}${
      control === undefined ? "" : ` ${text(control.detail)}`
    }`;
    return `<article class="case-evidence card" id="case-${i}"><h3>${text(c.id)} · ${
      text(c.title)
    }</h3><p class="sub">${text(c.summary)}</p><p class="sub">${controlLine}</p>${
      arms.join("")
    }</article>`;
  });
  return `<h2>Evidence</h2>
<p class="lede">What reached the attacker or the portal, and in which request, per case and
arm.</p>
${blocks.join("\n")}`;
}

/**
 * The whole report as one self-contained HTML document: run facts, a bar chart per metric
 * with one bar per arm ({@link CHART_METRICS}), a table of every case with outcome badges,
 * and every case's evidence per arm. No script, no external URL; every report string escaped.
 */
export function htmlReport(report: EvalReport): string {
  const colours = new Map(report.arms.map((a, i) => [a.name, ARM_COLOURS[i % ARM_COLOURS.length]]));
  const colour = (arm: string) => colours.get(arm) ?? "#94a3b8";
  const results = new Map(report.results.map((r) => [key(r.caseId, r.arm), r]));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${REPORT_TITLE}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${header(report, colour)}
${charts(report, colour)}
${caseTable(report, results)}
${evidence(report, results, colour)}
<footer>Omotai ${text(report.omotaiVersion)} · omotai eval report format ${
    text(String(report.format))
  } ·
a static page: no script, nothing loaded from anywhere.</footer>
</main>
</body>
</html>
`;
}
