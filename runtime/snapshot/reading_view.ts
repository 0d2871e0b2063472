/**
 * Reading mode's lines and runtime lines: an article's paragraphs as the model reads them,
 * paged by the outline's own pager (`page_view.ts`) inside the same untrusted-page block.
 *
 * Each paragraph is redacted whole before it is split into lines a page can hold, so a
 * split never leaves a piece of a secret that no longer matches it; a text the page cut at
 * its bound loses its tail as `boundedRedact()` says (see `runtime/redact/cut.ts`).
 *
 * @module
 */
import { boundedRedact, processRedactor, type Redactor } from "../redact/mod.ts";
import { LINE_MAX } from "./outline_line.ts";

/** The status line's word for reading mode's pages (`doc d3 · read · page 1/2`). */
export const READ_LABEL = "read";

/** What reading mode says when the page has no article (a runtime line, no page text). */
export const NO_ARTICLE_NOTE =
  'note: no readable article; use the outline (browser_snapshot without "mode")';

/** What it says when the extraction failed (it threw, or the page kept it past its time). */
export const READ_FAILED_NOTE = "note: the article could not be read (the page broke or " +
  'outlasted the reader); use the outline (browser_snapshot without "mode")';

/** The call that reads page `n` of reading mode. */
export function readPageCall(n: number): string {
  return `browser_snapshot {"mode": "read", "page": ${n}}`;
}

/** The runtime's line on an article cut at `maxChars` characters; nothing when it was whole. */
export function readingNote(cut: boolean, maxChars: number): string | undefined {
  return cut
    ? `note: article text cut after ${maxChars.toLocaleString("en-US")} characters`
    : undefined;
}

/**
 * An article's lines as shown: each redacted whole, then split at a space into lines of at
 * most `LINE_MAX` characters (a page never splits a line, and a paragraph may be longer than
 * a page). When the text was `cut`, its last paragraph is redacted as a bounded read.
 */
export function readingLines(
  paragraphs: readonly string[],
  cut: boolean,
  redactor: Redactor = processRedactor(),
): string[] {
  const out: string[] = [];
  paragraphs.forEach((p, i) => {
    const last = cut && i === paragraphs.length - 1;
    const text = last ? boundedRedact(p, true, redactor) : redactor.redact(p);
    out.push(...splitLine(text));
  });
  return out;
}

/** `text` in pieces of at most `LINE_MAX` characters, split at a space where one is near. */
export function splitLine(text: string): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > LINE_MAX) {
    let at = rest.lastIndexOf(" ", LINE_MAX);
    // No space in the second half: a hard cut rather than a run of short lines.
    if (at < LINE_MAX / 2) at = LINE_MAX;
    out.push(rest.slice(0, at).trimEnd());
    rest = rest.slice(at).trimStart();
  }
  if (rest) out.push(rest);
  return out;
}
