/**
 * Wraps outline lines into what the model sees: runtime lines outside, page content inside
 * an untrusted-content block whose markers carry the session's nonce, split into pages by a
 * token budget so nothing is lost on huge pages.
 *
 * @module
 */

/** Characters per token used for budgeting (a conservative average for English + markup). */
export const CHARS_PER_TOKEN = 4;
/** Default token budget of one snapshot page. */
export const DEFAULT_MAX_TOKENS = 6_000;

/** Everything the view needs about the captured tab. */
export interface PageView {
  nonce: string;
  origin: string;
  url: string;
  title: string;
  docId: string;
  tabIndex: number;
  tabCount: number;
  lines: string[];
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

/** Renders page `page` (1-based) of the view within `maxTokens`. */
export function renderPage(view: PageView, page = 1, maxTokens = DEFAULT_MAX_TOKENS): RenderedPage {
  const open = `<<<untrusted-page nonce=${view.nonce} origin=${view.origin}>>>`;
  const close = `<<<end-untrusted-page nonce=${view.nonce}>>>`;
  const head = [`url: ${neutralize(view.url)}`, `title: ${neutralize(view.title)}`];
  const overhead = open.length + close.length + head.join("\n").length + 200;
  const budget = Math.max(maxTokens * CHARS_PER_TOKEN - overhead, 200);
  const pages = paginate(view.lines.map(neutralize), budget);
  const index = Math.min(Math.max(page, 1), pages.length) - 1;
  const status = `doc ${view.docId} · tab ${view.tabIndex} of ${view.tabCount} · page ${
    index + 1
  }/${pages.length}`;
  const parts = [status, open, ...head, ...pages[index], close];
  if (index + 1 < pages.length) {
    parts.push(
      `more: ${pages.length - index - 1} more page(s); call browser_snapshot {"page": ${
        index + 2
      }} to read on`,
    );
  }
  if (page > pages.length) parts.unshift(`note: page ${page} does not exist; showing the last`);
  return { text: parts.join("\n"), page: index + 1, pages: pages.length };
}

/** Keeps page text from imitating the runtime's block markers. */
function neutralize(text: string): string {
  return text.replace(/<<<|>>>/g, (m) => m === "<<<" ? "‹‹‹" : "›››");
}
