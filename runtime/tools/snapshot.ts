/**
 * browser_snapshot: the outline (default), or reading mode's main text.
 *
 * @module
 */
import { z } from "zod";
import { DEFAULT_MAX_TOKENS } from "../snapshot/mod.ts";
import { pageFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";

/** The view a tool ends with (`browser_snapshot`, `browser_navigate`): outline or reading. */
export const VIEW_MODE = z.enum(["outline", "read"]).optional()
  .describe('"outline" (default): controls with refs; "read": the main text, its links with refs');

export const snapshotTool = defineTool({
  name: "browser_snapshot",
  title: "Page snapshot",
  description:
    "Outline of the current tab: headings, text and every interactive element with a ref " +
    "(e12) to pass to other tools. Large pages are split into pages; pass `page` to read on. " +
    '`mode: "read"` gives the page\'s main text instead (its article without menus; each ' +
    "link followed by its ref line), in pages of its own.",
  schema: z.strictObject({
    max_tokens: z.int().min(500).max(100_000).optional()
      .describe(`Token budget of one page (default ${DEFAULT_MAX_TOKENS})`),
    page: z.int().min(1).max(10_000).optional().describe("Which page of the snapshot (from 1)"),
    mode: VIEW_MODE,
  }),
  kind: "snapshot",
  readOnly: true,
  destructive: false,
  facts: (ctx) => pageFacts(ctx, "snapshot"),
  async handle(ctx, { max_tokens, page, mode }) {
    const budget = max_tokens ?? DEFAULT_MAX_TOKENS;
    const snap = mode === "read"
      ? await ctx.session.read(page ?? 1, budget)
      : await ctx.session.snapshot(page ?? 1, budget);
    ctx.response.snapshot(snap.text);
  },
});
