import assert from "node:assert/strict";
import type { CdpSession, TrackedTarget } from "../../cdp/mod.ts";
import { LEFT_BEHIND_MS, LeftBehind, releasingLeftBehind } from "./left_behind.ts";
import { LOAD_TIMEOUT_MS } from "./navigation.ts";

/** A page session as the release looks at it (only `detached`). */
function page(): CdpSession {
  return { detached: false } as unknown as CdpSession;
}

/** A tab of `session`, followed by a {@link LeftBehind} whose hook counts marks and releases. */
function followed(session: CdpSession) {
  const seen = { marks: 0, releases: 0, events: [] as string[] };
  new LeftBehind(() => () => {
    seen.marks++;
    seen.events.push("mark");
    return () => {
      seen.releases++;
    };
  }).watch({ session } as unknown as TrackedTarget);
  return seen;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("releasingLeftBehind() marks before the navigation runs and releases while its main response is late", async () => {
  const tab = page();
  const seen = followed(tab);
  const out = await releasingLeftBehind(tab, () => true, async () => {
    seen.events.push("navigate");
    while (seen.releases < 2) await sleep(5);
    return "loaded";
  }, 10);
  assert.equal(out, "loaded");
  assert.deepEqual(seen.events, ["mark", "navigate"]);
  assert.equal(seen.marks, 1, "one mark: every release is of what was judged before it");
  const after = seen.releases;
  await sleep(50);
  assert.equal(seen.releases, after, "nothing is released once the navigation is over");
});

Deno.test("releasingLeftBehind() releases nothing for a navigation that is not late, or a tab with no mark", async () => {
  const tab = page();
  const seen = followed(tab);
  await releasingLeftBehind(tab, () => false, () => sleep(100), 10);
  assert.equal(seen.releases, 0);
  // A page session no session's hooks followed (a capture's own browser): run as it is.
  assert.equal(await releasingLeftBehind(page(), () => true, () => Promise.resolve(7), 10), 7);
});

Deno.test("LEFT_BEHIND_MS leaves a navigation a few seconds for its main response, well inside its load bound", () => {
  assert.ok(LEFT_BEHIND_MS >= 2_000 && LEFT_BEHIND_MS <= LOAD_TIMEOUT_MS / 2);
});
