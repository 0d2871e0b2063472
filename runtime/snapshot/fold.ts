/**
 * Folded first pages: a new document of the origin the agent was just reading is sent whole,
 * in page order, except that its leading and trailing runs of lines the agent's last view of
 * the tab already showed word for word (the site's header, navigation and footer, refs
 * carried over) are one runtime line each, `<<<9 lines as before: e203–e211>>>`. The fold
 * marker uses the block's own arrows, which page text cannot produce (they are neutralized),
 * so a page cannot fake one. Between the folds, a select line the last view showed word for
 * word says `options: as before` instead of its option list.
 * `browser_snapshot` never folds.
 *
 * @module
 */
import { type PageView, type RenderedPage, renderPage } from "./page_view.ts";
import { lineRef, optionsAsBefore } from "./outline_line.ts";
import { refSpan } from "./ref_span.ts";
import { neutralize } from "./untrusted.ts";

/** Runs shorter than this stay as they are: a marker would save next to nothing. */
export const FOLD_MIN_LINES = 3;

/**
 * Renders `after` with the runs of lines `before` also had folded, or `undefined` when
 * nothing folds, the views are of different origins, or the folded page would not fit on
 * one page (later pages are numbered as `browser_snapshot` numbers them, unfolded).
 */
export function renderFolded(
  before: PageView,
  after: PageView,
  maxTokens?: number,
): RenderedPage | undefined {
  if (before.origin !== after.origin) return undefined;
  const left = new Map<string, number>();
  for (const l of before.lines) left.set(l, (left.get(l) ?? 0) + 1);
  const seen = after.lines.map((l) => {
    const n = left.get(l) ?? 0;
    if (n > 0) left.set(l, n - 1);
    return n > 0;
  });
  // Only the page's leading and trailing runs fold (its header and footer): a fold in the
  // middle would leave the agent to piece the content together, and a page that is all
  // folds (the same page loaded again) is sent whole, so the agent still sees it.
  let head = 0;
  while (head < seen.length && seen[head]) head++;
  if (head === seen.length) return undefined;
  let tail = seen.length;
  while (tail > head && seen[tail - 1]) tail--;
  const lines: string[] = [];
  const brief: string[] = [];
  let folded = 0;
  const fold = (from: number, to: number) => {
    const run = after.lines.slice(from, to);
    const marker = run.length >= FOLD_MIN_LINES ? foldMarker(run) : undefined;
    if (marker && marker.length < run.reduce((n, l) => n + l.length + 1, 0)) {
      lines.push(marker);
      brief.push(marker);
      folded += run.length;
      return;
    }
    for (let k = from; k < to; k++) {
      lines.push(neutralize(after.lines[k]));
      brief.push(neutralize(after.brief?.[k] ?? after.lines[k]));
    }
  };
  fold(0, head);
  // Between the folds, a select the agent's last view showed word for word keeps its value
  // and state; its option list is as before.
  const shown = (line: string, k: number) => seen[k] ? optionsAsBefore(line) : line;
  for (let k = head; k < tail; k++) {
    lines.push(neutralize(shown(after.lines[k], k)));
    brief.push(neutralize(shown(after.brief?.[k] ?? after.lines[k], k)));
  }
  fold(tail, after.lines.length);
  if (folded === 0) return undefined;
  const page = renderPage({ ...after, lines, brief }, 1, maxTokens, { neutralized: true });
  return page.pages === 1 ? page : undefined;
}

/** `<<<9 lines as before: e203–e211>>>`, naming every ref the run holds. */
function foldMarker(run: readonly string[]): string {
  const refs = run.map(lineRef).filter((r) => r !== undefined);
  return `<<<${run.length} lines as before${refs.length ? `: ${refSpan(refs)}` : ""}>>>`;
}
