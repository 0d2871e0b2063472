/**
 * Issue 37: every carrier of page text, fed every blank code point (from Unicode's categories)
 * before every forged runtime line, shows no line that reads as a runtime line the runtime did
 * not write (`forgedLines()`, an oracle written apart from `line_escape.ts`).
 */
import assert from "node:assert/strict";
import { OutlineWriter } from "./outline_writer.ts";
import { controlLine, headingLine } from "./outline_line.ts";
import { renderPage } from "./page_view.ts";
import { readingLines } from "./reading_view.ts";
import { formatDiff } from "./diff_format.ts";
import { diffViews } from "./diff.ts";
import { renderDialog } from "./dialog_view.ts";
import { neutralize, untrustedBlock } from "./untrusted.ts";
import { findLines } from "../tools/find_lines.ts";
import { tabLine } from "../tools/tabs.ts";
import { ResponseBuilder } from "../tools/response.ts";
import { Redactor } from "../redact/mod.ts";
import { pageView } from "../../tests/helpers/page_view.ts";
import {
  blankCodePoints,
  forgedLines,
  hostileStrings,
} from "../../tests/helpers/runtime_line_oracle.ts";

const NONCE = "n0nce";
const BLANKS = blankCodePoints();
/** Each blank code point before one forged line, the forged lines in turn. */
const HOSTILE = hostileStrings(BLANKS);
/** Every blank code point before every forged line. */
const ALL = hostileStrings(BLANKS, true);
const redactor = new Redactor();

function assertClean(text: string, what: string): void {
  const forged = forgedLines(text, NONCE);
  assert.deepEqual(forged.slice(0, 3), [], `${what}: ${forged.length} forged line(s)`);
}

/** The outline a writer makes of `texts`, each a text run of its own block. */
function outlineOf(texts: readonly string[]): { lines: string[]; brief: string[] } {
  const w = new OutlineWriter({ redactor });
  texts.forEach((t, i) => {
    if (i % 3 === 0) w.bullet();
    w.text(t, i);
    w.flush();
  });
  const { lines, brief } = w.finish();
  return { lines, brief };
}

Deno.test("OutlineWriter.text() and renderPage() show no forged line, full or overview", () => {
  const { lines, brief } = outlineOf(ALL);
  assert.ok(lines.length > ALL.length * 0.9, `${lines.length} of ${ALL.length}`);
  // As every view shows them: the block's arrows neutralized.
  assertClean(lines.map(neutralize).join("\n"), "lines");
  assertClean(brief.map(neutralize).join("\n"), "brief");
  const view = pageView(lines, { brief, nonce: NONCE, title: HOSTILE[0], path: HOSTILE[1] });
  const first = renderPage(view, 1, 200_000);
  assertClean(first.text, "first page");
  assertClean(renderPage(view, first.pages, 200_000).text, "last page");
});

Deno.test("controlLine() and headingLine() keep names (alt, aria-label, title) on their line", () => {
  const lines = ALL.flatMap((name, i) => [
    ...controlLine({ ref: `e${i + 100_000}`, role: i % 2 ? "button" : "link", name, target: "/x" }),
    headingLine(2, name),
  ]);
  assertClean(untrustedBlock("page", NONCE, lines, redactor), "control and heading lines");
});

Deno.test("readingLines() shows no forged line, in paragraphs, headings and list items", () => {
  const paragraphs = HOSTILE.flatMap((h) => [h, `# ${h}`, `- ${h}`, `word ${h}`]);
  assertClean(readingLines(paragraphs, false, redactor).join("\n"), "reading lines");
  assertClean(readingLines(ALL, true, redactor).join("\n"), "every code point and line");
});

Deno.test("findLines() shows the found lines escaped", () => {
  const { lines } = outlineOf(HOSTILE);
  const found = findLines(lines, "forged", { maxResults: 100_000, maxChars: 10_000_000 });
  assert.ok(found.shown > 0);
  assertClean(renderPage(pageView(found.lines, { nonce: NONCE })).text, "found lines");
});

Deno.test("formatDiff() shows added, changed, removed and context lines escaped", () => {
  const base = ["# Heading", ...Array.from({ length: 40 }, (_, i) => `[e${i}] button "b${i}"`)];
  const { lines: hostile } = outlineOf(HOSTILE);
  // At most DIFF_MAX_CHANGES lines a diff: the hostile lines in chunks, after the controls.
  for (let at = 0; at < hostile.length; at += 1_200) {
    const chunk = hostile.slice(at, at + 1_200);
    const after = base.flatMap((l, i) => [l, ...chunk.slice(i * 30, i * 30 + 30)]);
    for (const [b, a] of [[base, after], [after, base]]) {
      const before = pageView(b, { nonce: NONCE });
      const next = pageView(a, { nonce: NONCE, title: HOSTILE[at % HOSTILE.length] });
      const diff = diffViews(before, next);
      assert.ok(diff, "a diff");
      assertClean(formatDiff(diff, next, [], redactor), `diff at ${at}`);
    }
  }
});

Deno.test("renderDialog() keeps the message and default text on their lines", () => {
  for (const message of ALL) {
    const text = renderDialog({
      type: "prompt",
      message,
      defaultPrompt: message,
      tabIndex: 0,
      nonce: NONCE,
    });
    assertClean(text, JSON.stringify(message));
  }
});

Deno.test("tabLine() keeps a title on its line in the tab list", () => {
  const lines = ALL.map((title, index) =>
    tabLine({ index, current: index === 0, title, url: "http://127.0.0.1:1/x" }, redactor)
  );
  assertClean(untrustedBlock("tabs", NONCE, lines, redactor), "tab list");
});

Deno.test("ResponseBuilder.serialize() keeps notices, errors and denials on one line each", () => {
  for (const text of HOSTILE) {
    const r = new ResponseBuilder(redactor).error("STALE_REF", `x${text}`).notice(`y${text}`)
      .denied(`z${text}`, `w${text}`);
    assertClean(r.serialize().content[0].text, JSON.stringify(text));
  }
});
