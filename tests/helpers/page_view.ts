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
