/**
 * browser_find: the lines of the current tab's whole outline that hold a text, with their
 * refs (context lines only when asked), or the line of the control of one role and name,
 * exactly, so an agent looking for one control or one fact does not page through the
 * snapshot. The lines are the snapshot's own (same scan, same refs, redacted, escaped and
 * framed as a snapshot page is), and a tainted session gets the snapshot's status line.
 *
 * @module
 */
import { z } from "zod";
import { CHARS_PER_TOKEN, DEFAULT_MAX_TOKENS, neutralize, renderPage } from "../snapshot/mod.ts";
import { pageFacts } from "./facts.ts";
import { controlLines, findLines } from "./find_lines.ts";
import { defineTool } from "./tool.ts";

/** Matching lines shown when the call does not say. */
export const DEFAULT_FIND_RESULTS = 20;
/** Characters of lines one answer shows at most: one snapshot page's worth. */
export const FIND_MAX_CHARS = DEFAULT_MAX_TOKENS * CHARS_PER_TOKEN;

/** Lines of context a search may ask for on each side of a match. */
export const FIND_MAX_CONTEXT = 10;

/**
 * `browser_find {text, context?, max_results?}`: the matching outline lines; or
 * `{role, name}`: the line of that control. Framed as a snapshot page.
 */
export const findTool = defineTool({
  name: "browser_find",
  title: "Find in page",
  description:
    "Searches the current tab's whole outline (every page of browser_snapshot) for `text`, " +
    "case-insensitive, and returns only the matching lines with their refs (e12, usable by " +
    "browser_click and the other tools); `context: N` adds N lines either side and the " +
    "heading above. Or give `role` and `name` (no `text`) for one control, matched exactly " +
    '(e.g. {"role": "button", "name": "Sign in"}; a link\'s role is "link"): its ref line. ' +
    "Cheaper than paging through the snapshot to find one control or fact.",
  schema: z.strictObject({
    text: z.string().min(1).max(200)
      .refine((t) => t.trim() !== "", "text must hold more than whitespace")
      .optional()
      .describe("Text to look for in the outline's lines (case-insensitive substring)"),
    context: z.int().min(0).max(FIND_MAX_CONTEXT).optional()
      .describe("Lines shown either side of each match, and the heading above it (default 0)"),
    role: z.string().min(1).max(40).optional()
      .describe(
        'With name, instead of text: the control\'s role as lines show it ("button", "textbox", "link")',
      ),
    name: z.string().max(200).optional()
      .describe("With role: the control's accessible name, exactly"),
    max_results: z.int().min(1).max(50).optional()
      .describe(`Matching lines shown at most (default ${DEFAULT_FIND_RESULTS})`),
  }).refine(
    (a) =>
      a.text !== undefined
        ? a.role === undefined && a.name === undefined
        : a.role !== undefined && a.name !== undefined,
    "give text, or role and name (not both)",
  ).refine(
    (a) => a.context === undefined || a.text !== undefined,
    "context goes with text",
  ),
  kind: "snapshot",
  readOnly: true,
  destructive: false,
  facts: (ctx) => pageFacts(ctx, "snapshot"),
  async handle(ctx, { text, context, role, name, max_results }) {
    const found = await ctx.session.findView();
    if ("status" in found) {
      ctx.response.snapshot(found.status);
      return;
    }
    const { view } = found;
    const maxResults = max_results ?? DEFAULT_FIND_RESULTS;
    if (text === undefined) {
      // The model's own words, quoted so they cannot end the line or imitate a marker.
      const what = `${neutralize(JSON.stringify(role))} named ${neutralize(JSON.stringify(name))}`;
      const all = controlLines(view.lines, role!, name!);
      if (all.length === 0) {
        ctx.response.result(`no control is a ${what} (doc ${view.docId}); try text`);
        if (view.note) ctx.response.result(view.note);
        return;
      }
      const shown = all.slice(0, maxResults);
      const capped = shown.length < all.length ? `; showing ${shown.length}` : "";
      const controls = all.length === 1 ? "1 control" : `${all.length} controls`;
      ctx.response.result(`found ${controls}: ${what}${capped}`);
      ctx.response.snapshot(
        renderPage(
          { ...view, lines: shown.map((l) => l.trimStart()), brief: undefined },
          1,
          Infinity,
        )
          .text,
      );
      return;
    }
    const limits = { maxResults, maxChars: FIND_MAX_CHARS, context: context ?? 0 };
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
