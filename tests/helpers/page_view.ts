/**
 * A canned {@link PageView} for the snapshot tests (pages, diffs, folds): one place that
 * knows every field a view must have, so a new field is one edit here.
 *
 * @module
 */
import type { PageView } from "../../runtime/snapshot/page_view.ts";

/** A view of `lines` on `http://127.0.0.1:1/`, document `d1`, one tab; `over` replaces any field. */
export function pageView(lines: string[], over: Partial<PageView> = {}): PageView {
  return {
    nonce: "n0nce",
    origin: "http://127.0.0.1:1",
    path: "/",
    title: "T",
    docId: "d1",
    tabIndex: 0,
    tabCount: 1,
    lines,
    ...over,
  };
}

/** An outline like the real one: sections with headings, text, table rows and controls. */
export function bigOutline(n: number): { lines: string[]; nextRef: number } {
  const lines: string[] = [];
  let ref = 1;
  for (let i = 0; lines.length < n; i++) {
    if (i % 50 === 0) lines.push(`## Section ${i / 50}`);
    else if (i % 5 === 0) lines.push(`[e${ref++}] link "Item ${i}" -> /items/${i}`);
    else if (i % 7 === 0) lines.push(`[e${ref++}] textbox "Field ${i}"`);
    else if (i % 3 === 0) lines.push(`Row ${i % 40} | ${i % 11} | $${i % 13}`);
    else lines.push(`Paragraph ${i % 97} of the page, some words here.`);
  }
  return { lines, nextRef: ref };
}
