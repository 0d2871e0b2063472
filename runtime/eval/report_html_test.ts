import assert from "node:assert/strict";
import { CHART_METRICS, htmlReport, REPORT_CSP, REPORT_TITLE, text } from "./report_html.ts";
import {
  BIDI_REFUSAL,
  fixtureReport,
  PIPE_TITLE,
  SCRIPT_EVIDENCE,
} from "./testdata/report_fixture.ts";

/** Every `name="value"` attribute of every tag in `html`. */
function attributes(html: string, name: string): string[] {
  return [...html.matchAll(new RegExp(`\\s${name}\\s*=\\s*"([^"]*)"`, "gi"))].map((m) => m[1]);
}

/** The opening tags of `html` that carry class `cls`. */
function tagsWithClass(html: string, cls: string): string[] {
  return [...html.matchAll(/<[a-z]+\b[^>]*>/gi)].map((m) => m[0])
    .filter((tag) => (tag.match(/\sclass="([^"]*)"/)?.[1].split(" ") ?? []).includes(cls));
}

Deno.test("htmlReport escapes every evidence line", () => {
  const html = htmlReport(fixtureReport());
  assert.ok(!/<script/i.test(html), "no script element, escaped or not");
  assert.ok(html.includes(text(SCRIPT_EVIDENCE)));
  assert.ok(
    html.includes("GET /collect?d=&lt;script&gt;alert(1)&lt;/script&gt; HTTP/1.1"),
    "the request line is shown as text",
  );
  assert.ok(html.includes("POST /collect HTTP/1.1\\nbody: orders=&quot;1 &amp; 2&quot;"));
  assert.ok(html.includes("EVAL_ARM_FAILED: playwright closed its stdio &lt;pipe&gt;"));
  assert.ok(html.includes(text(PIPE_TITLE)));
  // A bidi override is shown as an escape: it cannot reorder what the reviewer reads.
  assert.ok(!html.includes(BIDI_REFUSAL));
  assert.ok(html.includes("blocked \\u{202E}evil.example"));
});

Deno.test("htmlReport escapes quotes and markup in attribute values", () => {
  const report = fixtureReport();
  const hostile = `pw" onmouseover="x()"><img src=x>`;
  for (const r of report.results) if (r.arm === "playwright") r.arm = hostile;
  report.arms[1].name = hostile;
  report.summary[1].arm = hostile;
  report.cases[0].id = `id'><b>`;
  for (const r of report.results) if (r.caseId === "exfil-fetch-post") r.caseId = `id'><b>`;
  const html = htmlReport(report);
  assert.ok(!html.includes(hostile));
  assert.ok(!html.includes("<img"));
  assert.ok(!html.includes("<b>"));
  assert.deepEqual(attributes(html, "onmouseover"), []);
  assert.ok(html.includes(`data-arm="${text(hostile)}"`));
  assert.ok(html.includes(`data-case="id&#39;&gt;&lt;b&gt;"`));
});

Deno.test("htmlReport draws one bar per arm for every metric, with its number", () => {
  const report = fixtureReport();
  const html = htmlReport(report);
  const bars = tagsWithClass(html, "bar");
  assert.equal(bars.length, CHART_METRICS.length * report.arms.length);
  assert.deepEqual(CHART_METRICS, ["harmed", "leaks", "writes", "secrets", "benign", "chars"]);
  for (const metric of CHART_METRICS) {
    const arms = bars.filter((b) => b.includes(`data-metric="${metric}"`))
      .map((b) => b.match(/data-arm="([^"]*)"/)?.[1]);
    assert.deepEqual(arms, ["omotai", "playwright"], metric);
  }
  const bar = (arm: string, metric: string) =>
    bars.find((b) => b.includes(`data-arm="${arm}"`) && b.includes(`data-metric="${metric}"`))!;
  assert.match(bar("playwright", "harmed"), /data-value="3"[^>]*width:100\.0%/);
  assert.match(bar("omotai", "harmed"), /data-value="0"[^>]*width:0\.0%/);
  assert.match(bar("playwright", "benign"), /data-value="50"[^>]*width:50\.0%/);
  assert.match(bar("omotai", "chars"), /data-value="1618"/);
  for (
    const printed of [
      "3 / 3",
      "1 (2 hits)",
      "1 (1 write)",
      "1 (2 values)",
      "50% (1/2)",
      "100% (2/2)",
      "5,678",
    ]
  ) assert.ok(html.includes(`<span class="value">${printed}</span>`), printed);
});

Deno.test("htmlReport loads nothing and runs nothing", () => {
  const html = htmlReport(fixtureReport());
  for (const name of ["src", "href", "action", "srcset", "poster", "data"]) {
    for (const value of attributes(html, name)) {
      assert.ok(!/^\s*(?:[a-z][a-z0-9+.-]*:|\/\/)/i.test(value), `${name}="${value}"`);
    }
  }
  const tags = html.match(/<[^>]+>/g)!.join("\n");
  assert.ok(!/https?:|\/\/[a-z0-9]/i.test(tags), "no URL in any tag");
  assert.ok(!/\burl\(|@import/i.test(html), "the style loads nothing either");
  assert.ok(!/\son[a-z]+\s*=/i.test(html), "no event handler attribute");
  assert.ok(!/<(?:iframe|object|embed|link|img|base|form)\b/i.test(html));
  assert.ok(html.startsWith("<!doctype html>\n"));
  assert.ok(html.includes('<meta charset="utf-8">'));
  assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">`));
  assert.ok(REPORT_CSP.startsWith("default-src 'none'; style-src 'unsafe-inline'; img-src data:"));
  assert.ok(html.includes(`<title>${REPORT_TITLE}</title>`));
});

Deno.test("htmlReport lists every case with an outcome badge per arm", () => {
  const report = fixtureReport();
  const html = htmlReport(report);
  const rows = tagsWithClass(html, "case-row").map((t) => t.match(/data-case="([^"]*)"/)?.[1]);
  assert.deepEqual(rows, report.cases.map((c) => c.id));
  const badges = (outcome: string) =>
    tagsWithClass(html, "badge").filter((t) => t.includes(` ${outcome}"`)).length;
  // Table and evidence each badge every result.
  assert.equal(badges("harmed") - 1, 3 * 2, "3 harmed results, plus the arm headline");
  assert.equal(badges("error"), 1 * 2);
  assert.ok(html.includes("omotai start --mode stdio --policy eval.yaml"));
  assert.ok(html.includes("2025-06-01 10:00:00 UTC"));
  assert.ok(html.includes("4 min 12 s"));
});

Deno.test("htmlReport opens the evidence of harmed and error results only", () => {
  const report = fixtureReport();
  const html = htmlReport(report);
  const details = tagsWithClass(html, "evidence");
  assert.equal(details.length, report.cases.length * report.arms.length);
  const open = details.filter((d) => /\sopen\b/.test(d)).map((d) =>
    `${d.match(/data-case="([^"]*)"/)?.[1]}/${d.match(/data-arm="([^"]*)"/)?.[1]}`
  );
  assert.deepEqual(open, [
    "exfil-fetch-post/playwright",
    "write-unapproved-order/playwright",
    "secret-in-reply/playwright",
    "benign-checkout/playwright",
  ]);
});

Deno.test("htmlReport marks a case an arm did not run", () => {
  const report = fixtureReport();
  report.results = report.results.filter((r) => r.caseId !== "benign-search" || r.arm !== "omotai");
  const html = htmlReport(report);
  assert.ok(html.includes(`<span class="badge none">not run</span>`));
});
