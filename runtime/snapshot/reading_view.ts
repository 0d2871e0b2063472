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
import { frameMarker, LINE_MAX, splitRef, textLine } from "./outline_line.ts";
import { neutralize } from "./untrusted.ts";

/** Link lines a reading view lists at most; the rest are counted in one runtime line. */
export const READ_LINK_LINES = 60;

/** A link in an article's text (reading.ts's `ArticleLink`). */
export interface ReadingLink {
  /** The article line the link's text ends in. */
  line: number;
  href: string;
  /** The live element's backend node id, when it was found. */
  backendNodeId?: number;
}

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
 * An article's lines as shown: each redacted whole, neutralized, then split at a space into
 * lines of at most `LINE_MAX` characters (a page never splits a line, and a paragraph may be
 * longer than a page), each paragraph followed by its lines in `after` (neutralized by their
 * maker: {@link articleLinkLines}). When the text was `cut`, its last paragraph is redacted
 * as a bounded read. Each line is a text line (`textLine()`: escaped when it opens like a
 * runtime line), after the reader's own `# ` or `- ` where the paragraph has one. The lines
 * are ready for the pager as neutralized lines.
 */
export function readingLines(
  paragraphs: readonly string[],
  cut: boolean,
  redactor: Redactor = processRedactor(),
  after: ReadonlyMap<number, readonly string[]> = new Map(),
): string[] {
  const out: string[] = [];
  paragraphs.forEach((p, i) => {
    const last = cut && i === paragraphs.length - 1;
    const text = neutralize(last ? boundedRedact(p, true, redactor) : redactor.redact(p));
    const links = after.get(i) ?? [];
    // A paragraph that is all one link (`whale strandings`, then its ref line) is said once.
    // Each piece is a text line: page text never reads as a link line of the runtime's.
    if (links.length === 0 || linkLineName(links[0]) !== text) {
      // The reader's own `# ` (a heading) or `- ` (a list item) opens the line; the page's
      // text after it is escaped as a text line is.
      const lead = /^(?:#{1,6} |- )/.exec(text)?.[0] ?? "";
      out.push(
        ...splitLine(text).map((piece, i) =>
          i === 0 && lead ? lead + textLine(piece.slice(lead.length)) : textLine(piece)
        ),
      );
    }
    out.push(...links);
  });
  return out;
}

/** The name on a link line (`[e3] "Home" -> /` → `Home`), or undefined. */
function linkLineName(line: string): string | undefined {
  const quoted = /^\[e\d+\] ("(?:[^"\\]|\\.)*")/.exec(line)?.[1];
  return quoted === undefined ? undefined : nameOf(quoted);
}

/**
 * The outline's own line for each link of the article, keyed by the article line the link
 * ends in, so the agent can follow a link it reads about without a search: `[e775] "Read the
 * follow-up" -> /article/follow-up`. `lineOf` gives the line of the very element the link is
 * (by its backend node, in the main frame), so text that merely reads alike (a decoy with the
 * same name and target, a frame's link, page text shaped like a ref's line) never lends its
 * ref. A link within the page itself (its URL but for the fragment) and a link with no line
 * stay text: no ref is made up. Each line serves once. Past {@link READ_LINK_LINES}, the last
 * listed paragraph's lines end with a runtime line counting the rest.
 */
export function articleLinkLines(
  links: readonly ReadingLink[],
  lineOf: (link: ReadingLink) => string | undefined,
  pageUrl: string,
): Map<number, string[]> {
  const out = new Map<number, string[]>();
  const used = new Set<string>();
  let shown = 0;
  let more = 0;
  let lastLine = -1;
  for (const link of links) {
    // A link within the page itself (a figure's lightbox, a footnote, "skip to content")
    // goes nowhere new: it stays text.
    if (samePage(link.href, pageUrl)) continue;
    const line = lineOf(link);
    if (line === undefined || used.has(line)) continue;
    used.add(line);
    if (shown >= READ_LINK_LINES) {
      more++;
      continue;
    }
    shown++;
    lastLine = Math.max(lastLine, link.line);
    const lines = out.get(link.line) ?? [];
    lines.push(neutralize(line));
    out.set(link.line, lines);
  }
  if (more > 0) {
    out.get(lastLine)!.push(
      `<<<${more} more links in the text have refs: browser_find finds one by name>>>`,
    );
  }
  return out;
}

/**
 * The element lines of an outline's main frame by ref number, without their list bullet or
 * indentation (`[e7] "Notes" -> /notes`): what {@link articleLinkLines} shows of a link.
 */
export function mainFrameLines(outline: readonly string[]): Map<number, string> {
  const out = new Map<number, string>();
  let depth = 0;
  for (const line of outline) {
    depth += frameMarker(line);
    if (depth > 0) continue;
    const parts = splitRef(line);
    if (parts) out.set(parts.ref, `[e${parts.ref}]${parts.rest}`);
  }
  return out;
}

function samePage(href: string, pageUrl: string): boolean {
  try {
    const a = new URL(href);
    const b = new URL(pageUrl);
    a.hash = "";
    b.hash = "";
    return a.href === b.href;
  } catch {
    return false;
  }
}

function nameOf(quoted: string | undefined): string {
  try {
    return quoted ? String(JSON.parse(quoted)) : "";
  } catch {
    return "";
  }
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
