/**
 * browser_tabs.
 *
 * @module
 */
import { z } from "zod";
import type { TabInfo } from "../browser/mod.ts";
import { InvalidArgumentsError } from "../mod.ts";
import { displayUrl } from "../net/mod.ts";
import { processRedactor, redactCut, type Redactor } from "../redact/mod.ts";
import { quote, untrustedBlock } from "../snapshot/mod.ts";
import { tabFacts } from "./facts.ts";
import { defineTool } from "./tool.ts";

export const tabsTool = defineTool({
  name: "browser_tabs",
  title: "Tabs",
  description:
    "List tabs, select one (it becomes the tab other tools act on), or close one. Indexes start at 0.",
  schema: z.strictObject({
    action: z.enum(["list", "select", "close"]),
    index: z.int().min(0).max(1_000).optional().describe("Tab index for select/close"),
  }),
  kind: "tab",
  readOnly: false,
  destructive: true,
  // Another tab can be listed, selected or closed while one waits on a dialog.
  runsBesideDialog: true,
  facts: (ctx) => tabFacts(ctx),
  async handle(ctx, { action, index }) {
    const { session, response } = ctx;
    if (action === "select") {
      if (index === undefined) throw new InvalidArgumentsError("select needs an index");
      await session.selectTab(index);
      response.result(`selected tab ${index}`).includeSnapshot();
      return;
    }
    if (action === "close") {
      await session.closeTab(index);
      response.result(`closed tab ${index ?? "(current)"}`);
    }
    const tabs = await session.tabs();
    // Titles and URLs are page-controlled: they go inside the untrusted block.
    const lines = tabs.map((t) => tabLine(t));
    response.result(
      `${tabs.length} tab(s)\n${untrustedBlock("tabs", session.nonce, lines)}`,
    );
  },
});

/** How long a tab's title may be in the list. */
export const TAB_TITLE_CHARS = 200;

/**
 * One tab of the list: `1: [current] "Title" origin/path`. The title is redacted before it
 * is cut to {@link TAB_TITLE_CHARS}, the URL after the browser's parse (which lower-cases a
 * host name, a secret in it too) and before it is shown.
 */
export function tabLine(
  t: Pick<TabInfo, "index" | "current" | "title" | "url">,
  redactor: Redactor = processRedactor(),
): string {
  const title = redactCut(t.title, TAB_TITLE_CHARS, { redactor });
  const url = redactor.redact(displayUrl(t.url, undefined));
  return `${t.index}:${t.current ? " [current]" : ""} ${quote(title)} ${url}`;
}
