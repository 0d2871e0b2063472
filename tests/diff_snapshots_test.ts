import assert from "node:assert/strict";
import { refOf, startHarness } from "./helpers/harness.ts";

Deno.test("actions on a page the agent saw return only what changed; refs stay stable", async () => {
  await using h = await startHarness();
  await using c = await h.connect();
  const home = await c.call("browser_navigate", { url: `${h.site.origin}/` });
  // A new document is a whole first page.
  assert.match(home.text, /<<<untrusted-page nonce=\w+ origin=/);
  assert.match(home.text, /# Fixture home/);
  const size = refOf(home.text, /combobox "Size"/);
  const picked = await c.call("browser_select_option", { ref: size, values: ["l"] });
  assert.equal(picked.isError, false, picked.text);
  assert.match(picked.text, /changes since your last view: (\d+ (added|removed|changed)(, )?)+\n/);
  // One text line replaced by another in place is one changed line.
  assert.match(picked.text, /^~ size is l$/m);
  assert.doesNotMatch(picked.text, /nothing chosen/);
  // The page's other content is not sent again (a heading may come back as context).
  assert.doesNotMatch(picked.text, /Next page|Sign in|I agree/);
  assert.match(picked.text, /^~ \[e\d+\] combobox "Size" = "Large"/m);
  assert.ok(
    picked.text.length < home.text.length / 2,
    `${picked.text.length} vs ${home.text.length}`,
  );
  // The same element keeps its ref across the diff.
  const again = await c.call("browser_select_option", { ref: size, values: ["s"] });
  assert.equal(again.isError, false, again.text);
  assert.match(again.text, /^~ size is s$/m);
  // browser_snapshot is always the whole page, and a new document again gets one.
  const snap = await c.call("browser_snapshot");
  assert.match(snap.text, /# Fixture home/);
  const next = await c.call("browser_click", { ref: refOf(snap.text, /"Next page" ->/) });
  assert.match(next.text, /<<<untrusted-page nonce=\w+ origin=.*\npath: \/next/);
  const none = await c.call("browser_wait_for", { time: 0.1 });
  assert.match(none.text, /no changes since your last view \(doc d\d+\)/);
});
