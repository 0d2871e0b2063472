/**
 * The runtime's CPU-bound hot paths, each on the input its unit test uses and against the
 * budget that test used to assert (tests assert outcomes; how fast is a claim, measured
 * here on a machine the runner chooses): diffs of a 20,000-line outline, the redactor over a
 * large page with many values, the page log's URL scrubber on hostile text, and the DOM
 * outline's bounded walks (deep nesting, giant names, nested controls, 250,000 paragraphs).
 * Each row is the median of a few runs after a warm-up; a row over its budget is marked.
 *
 * Run: deno run -A bench/hot_paths_bench.ts   (OMOTAI_BENCH_ROUNDS runs per row, default 5)
 *
 * @module
 */
import { diffViews } from "../runtime/snapshot/diff.ts";
import { renderDiff } from "../runtime/snapshot/diff_format.ts";
import { Redactor } from "../runtime/redact/redactor.ts";
import { scrubUrls } from "../runtime/browser/page_log_text.ts";
import { buildDomOutline, type DomFrame } from "../runtime/snapshot/dom_outline.ts";
import { bigOutline, pageView } from "../tests/helpers/page_view.ts";
import { domPage, type El } from "../tests/helpers/dom_snapshot.ts";
import { seededRandom } from "../tests/helpers/random.ts";
import { median } from "./compare.ts";

const ROUNDS = Number(Deno.env.get("OMOTAI_BENCH_ROUNDS") ?? 5);

/** One claim: what runs, and the budget its test asserted. */
interface Row {
  what: string;
  budgetMs: number;
  /** Builds the input (not timed) and returns the timed run. */
  setup(): () => unknown;
}

/** A printable value of `n` characters from `rand` (the redactor test's values are alike). */
function value(rand: () => number, n: number): string {
  const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#%&*+-/=?@_~é中";
  let s = "";
  for (let i = 0; i < n; i++) s += chars[Math.floor(rand() * chars.length)];
  return s;
}

function redactorWith(values: number, seed: number): Redactor {
  const rand = seededRandom(seed);
  const r = new Redactor();
  for (let i = 0; i < values; i++) r.add(value(rand, 10 + Math.floor(rand() * 21)));
  return r;
}

const outline = (root: DomFrame) => {
  let n = 0;
  return buildDomOutline(root, () => `e${++n}`);
};

/** The 20,000-line outline and its edited copy of diff_test.ts. */
function editedOutline() {
  const { lines, nextRef } = bigOutline(20_000);
  const after = [...lines];
  const textbox = after.findIndex((l, i) => i > 9_000 && l.includes("textbox"));
  after[textbox] = after[textbox].replace(/"$/, '" = "typed"');
  after.splice(15_000, 0, `[e${nextRef}] button "New"`, "Row 99 | 1 | $1");
  after.splice(4_000, 3);
  after[300] = "Paragraph changed text.";
  return { before: pageView(lines), after: pageView(after) };
}

const ROWS: Row[] = [
  {
    what: "diffViews(), 20,000-line outline, 8 lines changed",
    budgetMs: 500,
    setup() {
      const { before, after } = editedOutline();
      return () => diffViews(before, after);
    },
  },
  {
    what: "renderDiff(), the same",
    budgetMs: 500,
    setup() {
      const { before, after } = editedOutline();
      return () => renderDiff(before, after);
    },
  },
  {
    what: "diffViews() refuses a reversed 20,000-line page without refs",
    budgetMs: 2_000,
    setup() {
      const text = bigOutline(20_000).lines.filter((l) => !l.startsWith("["));
      const before = pageView(text);
      const after = pageView([...text].reverse());
      return () => diffViews(before, after);
    },
  },
  {
    what: "Redactor.redact(), 100 values, 330 KB page",
    budgetMs: 1_000,
    setup() {
      const r = redactorWith(100, 42);
      const page = "An ordinary line of page text, 1234567890 &amp; %2F \\u0041 QUJD\n".repeat(
        5_000,
      );
      return () => r.redact(page);
    },
  },
  {
    what: "Redactor.redact(), 200 values, 350 KB page of mixed scripts",
    budgetMs: 200,
    setup() {
      const r = redactorWith(200, 7);
      const page = "Ordinary text, ÉCOLE 中文 &amp; spaced l e t t e r s\u200b and-dashes\n"
        .repeat(5_000);
      return () => r.redact(page);
    },
  },
  {
    what: "scrubUrls(), 150,000 characters of hostile text",
    budgetMs: 200,
    setup() {
      const hostile = `${"a/".repeat(50_000)}${"b".repeat(50_000)}`;
      return () => scrubUrls(hostile);
    },
  },
  {
    what: "buildDomOutline(), a page nested 200,000 deep",
    budgetMs: 5_000,
    setup() {
      let node: El = { tag: "DIV", kids: [{ tag: "A", attrs: { href: "/b" }, kids: ["Bottom"] }] };
      for (let i = 0; i < 200_000; i++) node = { tag: i % 2 ? "DIV" : "SPAN", kids: [node] };
      const root = domPage([node, { tag: "P", kids: ["end"] }]);
      return () => outline(root);
    },
  },
  {
    what: "buildDomOutline(), names, values and targets of 5,000,000 characters",
    budgetMs: 2_000,
    setup() {
      const giant = "x".repeat(5_000_000);
      const root = domPage([
        { tag: "A", attrs: { href: "/a", "aria-label": `  ${giant}` }, kids: ["text"] },
        { tag: "A", attrs: { href: `/${giant}` }, kids: ["long href"] },
        { tag: "INPUT", attrs: { "aria-label": "Field" }, inputValue: giant },
        { tag: "H1", kids: [giant] },
      ]);
      return () => outline(root);
    },
  },
  {
    what: "buildDomOutline(), 3,000 nested buttons over 100,000 words",
    budgetMs: 5_000,
    setup() {
      let node: El = { tag: "DIV", kids: Array.from({ length: 100_000 }, (_, i) => `w${i} `) };
      for (let i = 0; i < 3_000; i++) {
        node = { tag: "DIV", attrs: { role: "button" }, kids: [node] };
      }
      const root = domPage([node]);
      return () => outline(root);
    },
  },
  {
    what: "buildDomOutline(), 250,000 paragraphs (cut at its line budget)",
    budgetMs: 5_000,
    setup() {
      const root = domPage(
        Array.from({ length: 250_000 }, (_, i): El => ({ tag: "P", kids: [`p${i}`] })),
      );
      return () => outline(root);
    },
  },
];

function main() {
  const out = [
    "## Hot paths (CPU, in-process)",
    "",
    `Median of ${ROUNDS} runs after a warm-up; the budget is what the unit test used to assert.`,
    "",
    "| what | median ms | budget ms | within |",
    "|---|---:|---:|:---:|",
  ];
  for (const row of ROWS) {
    const run = row.setup();
    run();
    const times: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      run();
      times.push(performance.now() - t0);
    }
    const ms = median(times);
    out.push(
      `| ${row.what} | ${ms.toFixed(1)} | ${row.budgetMs} | ${
        ms <= row.budgetMs ? "yes" : "**no**"
      } |`,
    );
  }
  console.log(out.join("\n"));
}

if (import.meta.main) main();
