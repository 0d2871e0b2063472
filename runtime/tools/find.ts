/**
 * browser_find: the lines of the current tab's whole outline that hold a text, with their
 * refs and a little context, so an agent looking for one control or one fact does not page
 * through the snapshot. The lines are the snapshot's own (same scan, same refs, redacted and
 * framed as a snapshot page is), and a tainted session gets the snapshot's status line.
 *
 * @module
 */
import { z } from "zod";
import { CHARS_PER_TOKEN, DEFAULT_MAX_TOKENS, renderPage } from "../snapshot/page_view.ts";
import { neutralize } from "../snapshot/untrusted.ts";
import { pageFacts } from "./facts.ts";
import { findLines } from "./find_lines.ts";
import { defineTool } from "./tool.ts";

/** Matching lines shown when the call does not say. */
export const DEFAULT_FIND_RESULTS = 20;
/** Characters of lines one answer shows at most: one snapshot page's worth. */
export const FIND_MAX_CHARS = DEFAULT_MAX_TOKENS * CHARS_PER_TOKEN;

/** `browser_find {text, max_results?}`: the matching outline lines, framed as a snapshot page. */
export const findTool = defineTool({
  name: "browser_find",
  title: "Find in page",
  description:
    "Searches the current tab's whole outline (every page of browser_snapshot) for `text`, " +
    "case-insensitive, and returns only the matching lines with their refs (e12, usable by " +
    "browser_click and the other tools), a line of context either side and the heading " +
    "above. Cheaper than paging through the snapshot to find one control or fact.",
  schema: z.strictObject({
    text: z.string().min(1).max(200)
      .refine((t) => t.trim() !== "", "text must hold more than whitespace")
      .describe("Text to look for in the outline's lines (case-insensitive substring)"),
    max_results: z.int().min(1).max(50).optional()
      .describe(`Matching lines shown at most (default ${DEFAULT_FIND_RESULTS})`),
  }),
  kind: "snapshot",
  readOnly: true,
  destructive: false,
  facts: (ctx) => pageFacts(ctx, "snapshot"),
  async handle(ctx, { text, max_results }) {
    const found = await ctx.session.findView();
    if ("status" in found) {
      ctx.response.snapshot(found.status);
      return;
    }
    const { view } = found;
    const limits = { maxResults: max_results ?? DEFAULT_FIND_RESULTS, maxChars: FIND_MAX_CHARS };
    const hits = findLines(view.lines, text, limits);
    // The model's own words, quoted so they cannot end the line or imitate a marker.
    const quoted = neutralize(JSON.stringify(text));
    if (hits.total === 0) {
      const searched = view.lines.length.toLocaleString("en-US");
      ctx.response.result(`no line matches ${quoted} (doc ${view.docId}, ${searched} lines)`);
      if (view.note) ctx.response.result(view.note);
      return;
    }
    const lines = hits.total === 1 ? "1 line" : `${hits.total.toLocaleString("en-US")} lines`;
    const capped = hits.shown < hits.total
      ? `; showing ${hits.shown} of ${hits.total.toLocaleString("en-US")}; narrow the text`
      : "";
    ctx.response.result(`found ${lines} for ${quoted}${capped}`);
    // Framed as a snapshot page: the selection is already within its budget, so one page.
    const page = renderPage({ ...view, lines: hits.lines, brief: undefined }, 1, Infinity);
    ctx.response.snapshot(page.text);
  },
});
