/**
 * What an action answers with after it acted: the page card (the default: URL, title, what
 * changed or the new page's counts, headings and controls, the controls near the action;
 * `snapshot/page_card.ts`), or the overview (the view actions sent before the card: what
 * changed, else the page's first page, overview first). The operator's policy chooses the
 * default (`views.action_answer`); one call may choose otherwise (`answer`). Every tool that
 * ends with a view takes the argument ({@link answering}); the pipeline alone reads it.
 *
 * @module
 */
import { z } from "zod";
import type { AnyTool, ToolSettings } from "./tool.ts";

/** The views an action may answer with. */
export const ACTION_ANSWERS = ["card", "overview"] as const;
/** The view an action answers with. */
export type ActionAnswer = typeof ACTION_ANSWERS[number];

/** The `answer` argument of every tool that ends with a view. */
export const ANSWER_ARG = z.enum(ACTION_ANSWERS).optional().describe(
  '"card" (default): a short page card (what changed, or the new page\'s headings and ' +
    'controls); "overview": the page view (overview of a long page). browser_snapshot always ' +
    "gives the whole page.",
);

const SAYS_SNAPSHOT = "Returns the page snapshot";
const SAYS_CARD = "Returns a page card (what changed, or the new page's headings and controls; " +
  '`answer: "overview"` for the page view)';

/**
 * `tool` with the optional `answer` argument, and its description saying what it returns.
 * The handler never sees a difference: the pipeline reads `answer` ({@link answerOf}).
 */
export function answering(tool: AnyTool): AnyTool {
  return {
    ...tool,
    description: tool.description.includes(SAYS_SNAPSHOT)
      ? tool.description.replace(SAYS_SNAPSHOT, SAYS_CARD)
      : `${tool.description} ${SAYS_CARD}.`,
    schema: tool.schema.extend({ answer: ANSWER_ARG }),
  };
}

/** The view a call answers with: its `answer`, else the policy's, else the card. */
export function answerOf(
  args: Record<string, unknown>,
  settings: Readonly<ToolSettings>,
): ActionAnswer {
  const asked = args.answer;
  if (asked === "card" || asked === "overview") return asked;
  return settings.actionAnswer ?? "card";
}

/**
 * The refs a call acted on, read from its arguments as every tool names them (`ref`, a
 * drag's `startRef` and `endRef`): the card shows the controls near them.
 */
export function actedRefs(args: Record<string, unknown>): string[] {
  return [args.ref, args.startRef, args.endRef].filter((r): r is string => typeof r === "string");
}
