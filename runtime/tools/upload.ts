/**
 * browser_file_upload.
 *
 * @module
 */
import { basename } from "node:path";
import { z } from "zod";
import type { Element, OpenChooser } from "../browser/mod.ts";
import { OmotaiError } from "../mod.ts";
import { elementFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";
import { resolveUploadPaths } from "./upload_paths.ts";

/** What an upload acts on: the chooser, its input, and the files allowed to go in it. */
interface Upload {
  chooser: OpenChooser;
  input: Element;
  files: string[];
}

export const fileUploadTool = defineTool({
  name: "browser_file_upload",
  title: "Upload files",
  description:
    "Answer the file chooser open on the current tab with files from the operator's upload directory; no paths cancels it.",
  schema: z.strictObject({
    paths: z.array(z.string().min(1).max(4_096)).max(20).optional()
      .describe("Files to upload, relative to the upload directory. Omit to cancel."),
  }),
  kind: "type",
  readOnly: false,
  destructive: true,
  async resolve(ctx, { paths }): Promise<Upload> {
    const tab = await ctx.session.currentTab();
    const chooser = ctx.session.choosers.openOn(tab.info.targetId);
    if (!chooser) {
      throw new OmotaiError("NO_FILE_CHOOSER", "no file chooser is open on the current tab");
    }
    // Checked before the facts: a refused path never reaches the page or the browser.
    const files = paths?.length ? await resolveUploadPaths(paths, ctx.settings.uploadDir) : [];
    if (files.length > 1 && !chooser.multiple) {
      throw new OmotaiError("INVALID_ARGUMENTS", "this file input takes one file");
    }
    const input: Element = {
      session: chooser.session,
      page: tab.session,
      frameId: chooser.frameId,
      backendNodeId: chooser.backendNodeId,
      ref: "the file input",
      mainFrame: { id: tab.info.targetId, url: tab.info.url },
    };
    return { chooser, input, files };
  },
  // Choosing files is typing into the input: its frame and form are judged.
  facts: (ctx, _args, upload) => elementFacts(ctx, "type", upload.input),
  async handle(ctx, _args, { chooser, files }) {
    ctx.response.includeSnapshot();
    ctx.session.choosers.close(chooser.tabId);
    if (files.length === 0) {
      ctx.response.result("cancelled the file chooser");
      return;
    }
    await chooser.session.send("DOM.setFileInputFiles", {
      files: await ctx.session.uploadable(files),
      backendNodeId: chooser.backendNodeId,
    });
    ctx.response.result(
      `chose ${files.length} file(s): ${files.map((f) => JSON.stringify(basename(f))).join(", ")}`,
    );
  },
});
