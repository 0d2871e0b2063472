/**
 * One in-process browser session over a two-origin site whose pages each case swaps: for test
 * files whose cases are independent and test nothing of isolation between sessions, so they
 * run as the steps of one test on one browser (one launch, not one per case).
 *
 * @module
 */
import assert from "node:assert/strict";
import { ProfileStore } from "../../cdp/mod.ts";
import { BrowserSession } from "../../runtime/browser/browser_session.ts";
import { type Pages, serveTwoOrigins, type TwoOriginSite } from "../fixtures/two_origins.ts";

/** The session and site every case of a file shares. */
export interface SharedSession extends AsyncDisposable {
  session: BrowserSession;
  site: TwoOriginSite;
  /** The site's pages: the current case's ({@link freshCase} swaps them). */
  routes: Pages;
}

/** Opens a browser session (its profile under a temp dir named `prefix`) and its site. */
export async function openSharedSession(prefix: string): Promise<SharedSession> {
  const routes: Pages = {};
  const site = serveTwoOrigins(() => routes);
  const dir = await Deno.makeTempDir({ prefix });
  const profiles = await ProfileStore.open(dir);
  const session = new BrowserSession({
    profiles,
    executable: Deno.env.get("OMOTAI_BROWSER") ?? "/usr/bin/chromium",
    audit: { append() {} },
  });
  return {
    session,
    site,
    routes,
    async [Symbol.asyncDispose]() {
      await session[Symbol.asyncDispose]();
      await profiles[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * Readies `shared` for the next case: every tab an earlier case left is closed (its page, a
 * script still running in it, and the last view a fold or diff would be written against go
 * with it), one fresh tab is checked for, the site serves `pages` alone and has seen nothing.
 */
export async function freshCase(shared: SharedSession, pages: Pages): Promise<void> {
  const { session, site } = shared;
  // Close every tab open now: the session then opens a fresh one (listing the tabs does).
  const before = (await session.tabs()).map((tab) => tab.targetId);
  for (let i = 0; i < before.length; i++) await session.closeTab();
  const after = await session.tabs();
  assert.ok(after.length === 1 && !before.includes(after[0].targetId), "one fresh tab");
  for (const path of Object.keys(shared.routes)) delete shared.routes[path];
  Object.assign(shared.routes, pages);
  site.hits.length = 0;
  site.posts.clear();
}
