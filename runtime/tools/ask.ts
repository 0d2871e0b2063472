/**
 * ask_human: a question for the operator on the console. It gates nothing: the answer is
 * advice to the agent, never an approval (approvals are asked by the runtime itself).
 *
 * @module
 */
import { z } from "zod";
import { OmotaiError } from "../mod.ts";
import { tabFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";

export const askHumanTool = defineTool({
  name: "ask_human",
  title: "Ask the operator",
  description:
    "Ask the human operator a question on the Omotai console and wait for the answer. It approves nothing.",
  schema: z.strictObject({
    question: z.string().min(1).max(2_000).describe("The question, in plain words"),
  }),
  kind: "wait",
  readOnly: true,
  destructive: false,
  runsBesideDialog: true,
  facts: (ctx) => tabFacts(ctx).then((f) => ({ ...f, kind: "wait" as const })),
  async handle(ctx, { question }) {
    if (!ctx.human) {
      throw new OmotaiError("ASK_UNAVAILABLE", "no operator console is running to ask");
    }
    const r = await ctx.human.ask(
      { question, agent: ctx.session.agent, session: ctx.session.id },
      ctx.settings.askTimeoutMs,
      ctx.signal,
    );
    if ("timeout" in r) {
      throw new OmotaiError(
        "ASK_TIMEOUT",
        `the operator did not answer within ${Math.round(ctx.settings.askTimeoutMs / 1000)} s`,
      );
    }
    // The operator is trusted: the answer is a runtime line, not page content.
    ctx.response.result(`the operator answered: ${JSON.stringify(r.answer)}`);
  },
});
