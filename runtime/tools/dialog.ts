/**
 * browser_handle_dialog. In a tainted session it runs only to dismiss (the pipeline refuses
 * anything else) and says nothing the page chose, not even the dialog's type.
 *
 * @module
 */
import { z } from "zod";
import { type OpenDialog, runAndSettle } from "../browser/mod.ts";
import { OmotaiError } from "../mod.ts";
import { dialogFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";

export const handleDialogTool = defineTool({
  name: "browser_handle_dialog",
  title: "Handle a dialog",
  description:
    "Accept or dismiss the dialog (alert, confirm, prompt, beforeunload) open on the current tab. Returns the page snapshot. " +
    'In a session tainted by a login only {"accept": false} runs, and the dialog\'s text is not shown.',
  schema: z.strictObject({
    accept: z.boolean().describe("Whether to accept the dialog"),
    promptText: z.string().max(10_000).optional().describe("Text to enter into a prompt"),
  }),
  kind: "click",
  readOnly: false,
  destructive: true,
  runsBesideDialog: true,
  resolve(ctx): Promise<OpenDialog> {
    const dialog = ctx.session.guard.openDialog();
    if (!dialog) {
      return Promise.reject(new OmotaiError("NO_DIALOG", "no dialog is open on the current tab"));
    }
    return Promise.resolve(dialog);
  },
  facts: (ctx, args, dialog) => Promise.resolve(dialogFacts(ctx, dialog, args.accept)),
  async handle(ctx, args, dialog) {
    ctx.response.includeSnapshot();
    const tab = await ctx.session.currentTab();
    // The page may go on to navigate (a beforeunload accepted, a confirm that submits). Its
    // renderer waits on the dialog, so the main frame's id is the tab's own (as in Chromium)
    // rather than read from the page.
    const outcome = await runAndSettle(
      tab.session,
      () => ctx.session.guard.dialogs.answer(dialog.tabId, args.accept, args.promptText),
      { mainFrameId: tab.info.targetId },
    );
    const typed = args.accept && dialog.type === "prompt" && args.promptText !== undefined
      ? ` with ${[...args.promptText].length} characters`
      : "";
    // The type is the page's choice too: a tainted session hears only that it was dismissed.
    const what = ctx.session.state.tainted ? "dialog" : `${dialog.type} dialog`;
    ctx.response.result(
      `${args.accept ? "accepted" : "dismissed"} the ${what}${typed}${
        outcome.navigated ? "; a new page loaded" : ""
      }`,
    );
  },
});
