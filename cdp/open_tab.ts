/**
 * A new tab of a browser driven directly (a control run, a report check, a test's own
 * browser): created, attached flat, its Page domain enabled. The runtime's sessions do not use
 * it; they attach through the target tracker.
 *
 * @module
 */
import type { BrowserProcess } from "./chromium_process.ts";
import type { CdpSession } from "./session.ts";

/** A tab opened by {@link openTab}. */
export interface OpenedTab {
  targetId: string;
  session: CdpSession;
}

/** Opens `url` (about:blank by default) in a new tab of `browser` and attaches to it. */
export async function openTab(browser: BrowserProcess, url = "about:blank"): Promise<OpenedTab> {
  const root = browser.connection.root;
  const { targetId } = await root.send("Target.createTarget", { url });
  const { sessionId } = await root.send("Target.attachToTarget", { targetId, flatten: true });
  const session = browser.connection.session(sessionId);
  if (!session) throw new Error(`no session for the tab ${targetId}`);
  await session.send("Page.enable");
  return { targetId, session };
}
