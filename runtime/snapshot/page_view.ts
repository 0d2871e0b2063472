/**
 * Wraps outline lines into what the model sees: runtime lines outside, page content inside
 * an untrusted-content block whose markers carry the session's nonce, split into pages by a
 * token budget so nothing is lost on huge pages.
 *
 * The lines come redacted from the outline (before it shortened or split anything); the
 * view's own page strings (title, path, origin) are redacted here. Pages never split a line.
 *
 * @module
 */
import { processRedactor, type Redactor } from "../redact/mod.ts";
import { oneLine } from "./line_escape.ts";
import { neutralize, untrustedClose, untrustedOpen } from "./untrusted.ts";
import { aliasOrigins, overviewLines } from "./overview.ts";

/** Characters per token used for budgeting (a conservative average for English + markup). */
export const CHARS_PER_TOKEN = 4;
/** Default token budget of one snapshot page. */
export const DEFAULT_MAX_TOKENS = 6_000;
/** Outlines longer than this open with overview pages (text shortened, paths omitted). */
export const OVERVIEW_MIN_CHARS = 3_000;

/** Everything the view needs about the scanned tab. */
export interface PageView {
  nonce: string;
  origin: string;
  /** Path of the page (its origin is on the marker). */
  path: string;
  title: string;
  docId: string;
  tabIndex: number;
  tabCount: number;
  lines: string[];
  /** Overview form of each line (aligned with `lines`); empty entries are left out. */
  brief?: string[];
  /**
   * A runtime line about how the page was read (from a DOM snapshot, or cut at the outline's
   * budget), shown under the status line of every page, outside the untrusted block. Never
   * page text.
   */
  note?: string;
}

/**
 * ` · tab I of N` when the session has more than one tab; nothing for the one tab most
 * sessions have (a new tab is announced by a notice when it opens).
 */
export function tabLabel(view: Pick<PageView, "tabIndex" | "tabCount">): string {
  return view.tabCount > 1 ? ` · tab ${view.tabIndex} of ${view.tabCount}` : "";
}

/** How {@link renderPage} treats the view's lines. */
export interface RenderOptions {
  /** Redacts the title, path and origin; the process's redactor by default. */
  redactor?: Redactor;
  /**
   * The lines are neutralized already and may hold runtime markers inside the block (a
   * folded page's `<<<… as before>>>`); page text must never be passed this way unneutralized.
   */
  neutralized?: boolean;
  /**
   * The call a `more:` line names to read page `n` (`browser_snapshot {"page": n}` by
   * default); reading mode's pages name their own mode.
   */
  pageCall?: (n: number) => string;
  /** A word for the status line after the document id (`read`: reading mode's pages). */
  label?: string;
}

/** The call that reads page `n` of an outline. */
export function outlinePageCall(n: number): string {
  return `browser_snapshot {"page": ${n}}`;
}

/** One rendered page of a snapshot. */
export interface RenderedPage {
  text: string;
  page: number;
  pages: number;
}

/** Splits lines into pages of at most `maxChars` characters each (a line is never split). */
export function paginate(lines: string[], maxChars: number): string[][] {
  const pages: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const line of lines) {
    const cost = line.length + 1;
    if (current.length > 0 && size + cost > maxChars) {
      pages.push(current);
      current = [];
      size = 0;
    }
    current.push(line);
    size += cost;
  }
  if (current.length > 0 || pages.length === 0) pages.push(current);
  return pages;
}

/**
 * Renders page `page` (1-based) of the view within `maxTokens`. Long outlines start with
 * overview pages (every control and heading, cut as overview.ts says) followed by the full
 * outline, so the first page is small while the pages together lose nothing.
 */
export function renderPage(
  view: PageView,
  page = 1,
  maxTokens = DEFAULT_MAX_TOKENS,
  options: RenderOptions = {},
): RenderedPage {
  const redactor = options.redactor ?? processRedactor();
  const call = options.pageCall ?? outlinePageCall;
  const open = untrustedOpen("page", view.nonce, view.origin, redactor);
  const close = untrustedClose("page", view.nonce);
  const head = [
    `path: ${neutralize(oneLine(redactor.redact(view.path)))}`,
    `title: ${neutralize(oneLine(redactor.redact(view.title)))}`,
  ];
  const overhead = open.length + close.length + head.join("\n").length + 300;
  const budget = Math.max(maxTokens * CHARS_PER_TOKEN - overhead, 200);
  const keep = (l: string) => l;
  const lines = view.lines.map(options.neutralized ? keep : neutralize);
  const fullPages = paginate(lines, budget);
  const size = lines.reduce((n, l) => n + l.length + 1, 0);
  // Only a long outline has overview pages: a short one is not cut down at all.
  const overview = size > OVERVIEW_MIN_CHARS && view.brief
    ? paginate(
      overviewLines(lines, view.brief.map(options.neutralized ? keep : neutralize)),
      budget,
    ).map(aliasOrigins)
    : [];
  const pages = [...overview, ...fullPages];
  const index = Math.min(Math.max(page, 1), pages.length) - 1;
  const kind = overview.length === 0
    ? ""
    : index < overview.length
    ? " (overview: text shortened)"
    : " (full text)";
  // A one-page view says nothing of pages: "page 1/1" would be sent with most results.
  const paging = pages.length === 1 ? "" : ` · page ${index + 1}/${pages.length}${kind}`;
  const label = options.label ? ` · ${options.label}` : "";
  const status = `doc ${view.docId}${label}${tabLabel(view)}${paging}`;
  const parts = [status, ...(view.note ? [view.note] : []), open, ...head, ...pages[index], close];
  if (overview.length > 0 && index === 0) {
    const first = overview.length + 1;
    const where = first === pages.length
      ? `page ${first} holds`
      : `pages ${first}-${pages.length} hold`;
    parts.push(`more: ${where} the full text; call ${call(first)}`);
  }
  if (index + 1 < pages.length && !(overview.length > 0 && index === 0 && overview.length === 1)) {
    parts.push(
      `more: ${pages.length - index - 1} more page(s); call ${call(index + 2)} to read on`,
    );
  }
  if (page > pages.length) parts.unshift(`note: page ${page} does not exist; showing the last`);
  return { text: parts.join("\n"), page: index + 1, pages: pages.length };
}
