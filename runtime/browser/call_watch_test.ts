import assert from "node:assert/strict";
import { watchCall } from "./call_watch.ts";
import { Dialogs } from "./dialogs.ts";

Deno.test("watchCall() whose probe throws stops probing and stays quiet: no unhandled rejection", async () => {
  let asked = 0;
  const watch = watchCall({
    currentTab: () => {
      asked++;
      throw new TypeError("injected into the call watch");
    },
    dialogs: new Dialogs(() => {}),
    busy: () => false,
    probeAfterMs: 5,
  });
  // A rejection escaping the timer would fail this test (and, in the runtime, the process).
  await new Promise((r) => setTimeout(r, 50));
  watch.dispose();
  assert.equal(asked, 1, "the failed watch did not go on probing");
  const outcome = await Promise.race([
    watch.interrupted.then(() => "interrupted"),
    new Promise((r) => setTimeout(() => r("still waiting"), 10)),
  ]);
  assert.equal(outcome, "still waiting", "a failed watch interrupts nothing");
});
