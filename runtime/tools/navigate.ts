/**
 * browser_navigate, browser_navigate_back.
 *
 * @module
 */
import { z } from "zod";
import { goBack, LOAD_TIMEOUT_MS, type LoadOutcome, navigate } from "../browser/mod.ts";
import { OmotaiError } from "../mod.ts";
import { displayUrl } from "../net/mod.ts";
import { backFacts, navigateFacts } from "./facts.ts";
import { VIEW_MODE } from "./snapshot.ts";
import { defineTool, parseUrlArg, type ToolContext } from "./tool.ts";

/** Adds the outcome of a load to the response; a failed load is an error. */
export function reportLoad(ctx: ToolContext, what: string, outcome: LoadOutcome): void {
  if (outcome.error) {
    throw new OmotaiError("NAVIGATION_FAILED", `${what} failed: ${outcome.error}`);
  }
  ctx.response.result(`${what}${outcome.timedOut ? " (the page is still loading)" : ""}`);
}

export const navigateTool = defineTool({
  name: "browser_navigate",
  title: "Navigate to a URL",
  description: "Navigate the current tab to a URL. Returns the page snapshot; " +
    '`mode: "read"` returns its main text instead (as browser_snapshot\'s reading mode: for ' +
    "an article you came to read).",
  schema: z.strictObject({
    url: z.string().min(1).max(8_192).describe("The URL to open"),
    mode: VIEW_MODE,
  }),
  kind: "navigate",
  readOnly: false,
  destructive: false,
  // Leaving a page is how an agent gets away from its dialogs: the one open is answered.
  leavesDialog: true,
  facts: (ctx, { url }) => navigateFacts(ctx, url),
  async handle(ctx, { url, mode }) {
    const target = parseUrlArg(url);
    ctx.response.includeSnapshot(mode === "read" ? "read" : "changes");
    const left = await ctx.session.guard.leave(
      await ctx.session.currentTab(),
      "NAVIGATE",
      async (tab, answered) => {
        // A page's main frame id is its target id: its renderer may be busy with dialogs.
        // The session's other tabs held still: their requests cannot hold its connections.
        const go = () =>
          ctx.session.quietOthers(
            tab,
            () => navigate(tab.session, target.href, { mainFrameId: tab.info.targetId }),
          );
        const outcome = await go();
        if (answered?.type !== "beforeunload" || outcome.error !== "net::ERR_ABORTED") {
          return outcome;
        }
        // The accepted beforeunload let the navigation it stood in front of go on, and
        // Chromium aborts this one while that one is under way: once it has loaded, this one
        // is sent again, to the page that is then there.
        await tab.session.waitFor("Page.loadEventFired", undefined, {
          timeoutMs: LOAD_TIMEOUT_MS,
        }).catch(() => {});
        return await go();
      },
      { reopen: true },
    );
    if (left.said) ctx.response.result(left.said);
    if (!left.value) throw new OmotaiError("NAVIGATION_FAILED", "the tab could not be left");
    reportLoad(ctx, `navigated to ${displayUrl(target.href, undefined)}`, left.value);
  },
});

export const navigateBackTool = defineTool({
  name: "browser_navigate_back",
  title: "Go back",
  description: "Go back to the previous page of the current tab. Returns the page snapshot.",
  schema: z.strictObject({}),
  kind: "back",
  readOnly: false,
  destructive: false,
  facts: (ctx) => backFacts(ctx),
  async handle(ctx) {
    ctx.response.includeSnapshot();
    const tab = await ctx.session.currentTab();
    const outcome = await ctx.session.quietOthers(tab, () => goBack(tab.session));
    if (!outcome) throw new OmotaiError("NO_HISTORY", "there is no previous page in this tab");
    reportLoad(ctx, "went back", outcome);
  },
});
