/**
 * The door of runtime/snapshot/ (outline and page rendering): other folders import from this file
 * only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { buildAxOutline } from "./ax_outline.ts";
export type { AxFrame, HiddenControl } from "./ax_outline.ts";
export { renderDialog, renderWithheldDialog } from "./dialog_view.ts";
export { renderDiff } from "./diff_format.ts";
export type { TypedValue } from "./diff_format.ts";
export { buildDomOutline, domFrames, domTitle } from "./dom_outline.ts";
export type { DomFrame } from "./dom_outline.ts";
export { renderFolded } from "./fold.ts";
export { LINE_BREAKS, oneLine, quote } from "./line_escape.ts";
export { ARIA_CONTROL_ROLES, headingLevelOf, splitRef } from "./outline_line.ts";
export { renderCard } from "./page_card.ts";
export { CHARS_PER_TOKEN, DEFAULT_MAX_TOKENS, renderPage } from "./page_view.ts";
export type { PageView, RenderedPage } from "./page_view.ts";
export {
  articleLinkLines,
  mainFrameLines,
  NO_ARTICLE_NOTE,
  READ_FAILED_NOTE,
  READ_LABEL,
  readingLines,
  readingNote,
  readPageCall,
} from "./reading_view.ts";
export type { ReadingLink } from "./reading_view.ts";
export { neutralize, untrustedBlock } from "./untrusted.ts";
export {
  IN_PAGE_CONTROL_SHOWN,
  IN_PAGE_HIDDEN_OPTIONS,
  IN_PAGE_PRUNED_COPY,
  VISIBILITY_STYLES,
} from "./visibility.ts";
