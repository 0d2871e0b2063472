/**
 * browser_hover, browser_drag.
 *
 * @module
 */
import { z } from "zod";
import {
  dragElement,
  type Element,
  hoverElement,
  type LoadOutcome,
  runAndSettle,
} from "../browser/mod.ts";
import type { Facts } from "../policy/mod.ts";
import { elementFacts, refuseDropOnPassword } from "./facts.ts";
import { defineTool, type ToolContext } from "./tool.ts";

/** The `ref` argument of a tool acting on one element. */
export const refArg = z.string().min(1).max(32).describe(
  "Element ref from the latest snapshot, e.g. e12",
);
/** The human-readable element description Playwright's tools take (logs and approvals). */
export const elementArg = z.string().max(500).optional()
  .describe("Human-readable description of the element (for logs and approvals)");

/** Runs an input action on `el`'s tab and waits for a navigation it may start. */
export const settle = (el: Element, action: () => Promise<void>): Promise<LoadOutcome> =>
  runAndSettle(el.page, action, { mainFrameId: el.mainFrame.id });

/** `line`, plus what happened to the page afterwards. */
export function settledLine(line: string, outcome: LoadOutcome): string {
  if (!outcome.navigated) return line;
  return line + (outcome.timedOut ? "; a new page is still loading" : "; a new page loaded");
}

/**
 * Facts of hovering over `el`: judged as a click on it that goes nowhere and submits nothing.
 * A hover is input the page's scripts see, so whatever may not be clicked (a foreign link, a
 * field of a foreign form, a frame a module forbids) may not be hovered either; it cannot
 * follow a link or submit a form, so those parts of a click are left out.
 */
export async function hoverFacts(ctx: ToolContext, el: Element): Promise<Facts> {
  const facts = await elementFacts(ctx, "click", el);
  facts.target = null;
  facts.method = "GET";
  if (facts.form) facts.form = { ...facts.form, submits: false };
  return facts;
}

export const hoverTool = defineTool({
  name: "browser_hover",
  title: "Hover",
  description: "Move the mouse over an element by ref. Returns the page snapshot.",
  schema: z.strictObject({ element: elementArg, ref: refArg }),
  kind: "click",
  readOnly: false,
  destructive: false,
  resolve: (ctx, args) => ctx.session.resolve(args.ref),
  facts: (ctx, _args, el) => hoverFacts(ctx, el),
  async handle(ctx, args, el) {
    ctx.response.includeSnapshot();
    const outcome = await settle(el, () => hoverElement(el));
    ctx.response.result(settledLine(`hovered over ${args.ref}`, outcome));
  },
});

export const dragTool = defineTool({
  name: "browser_drag",
  title: "Drag",
  description:
    "Drag one element onto another by refs (HTML5 drag and drop or mouse drags). Returns the page snapshot.",
  schema: z.strictObject({
    startElement: elementArg,
    startRef: refArg,
    endElement: elementArg,
    endRef: refArg,
  }),
  kind: "click",
  readOnly: false,
  destructive: true,
  resolve: async (ctx, args) => ({
    from: await ctx.session.resolve(args.startRef),
    to: await ctx.session.resolve(args.endRef),
  }),
  // Input on two elements: each judged as a click on it. A drag released where it started is
  // a click, so a submit button at either end counts as submitting its form.
  facts: async (ctx, _args, { from, to }) => {
    await refuseDropOnPassword(ctx, to);
    return [await elementFacts(ctx, "click", from), await elementFacts(ctx, "click", to)];
  },
  async handle(ctx, args, { from, to }) {
    ctx.response.includeSnapshot();
    let kind = "";
    const outcome = await settle(from, async () => {
      kind = await dragElement(from, to) === "html5" ? "HTML5 drag and drop" : "mouse drag";
    });
    ctx.response.result(
      settledLine(`dragged ${args.startRef} onto ${args.endRef} (${kind})`, outcome),
    );
  },
});
