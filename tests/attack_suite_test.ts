/**
 * The attack suite (tests/helpers/attack_suite.ts): a hostile page on 127.0.0.1 tries every
 * way we know to get bytes to an attacker on 127.0.0.3 (and 127.0.0.4). First a control run
 * in a plain, unguarded Chromium proves each attempt really reaches the attacker; then the
 * same attempts through Omotai must leave the attacker at zero TCP connections and zero UDP
 * datagrams, each with its deny in the audit, while benign browsing of the allowed origin
 * still works. The other build (tests/attack_suite_builds_test.ts), the lighter request_guard
 * modes (tests/attack_suite_guard_modes_test.ts) and the runs without a network namespace, with
 * nothing paused (one in each of those files), run in files of their own, beside this one.
 *
 * @module
 */
import assert from "node:assert/strict";
import { eventually, refOf } from "./helpers/harness.ts";
import {
  attackSuite,
  attackWorld,
  BUILDS,
  controlMisses,
  type GuardedRun,
  neverMadeBy,
} from "./helpers/attack_suite.ts";

for (const executable of BUILDS) {
  Deno.test(`control: every attack reaches the attacker from a plain Chromium (${executable})`, async () => {
    await using w = await attackWorld();
    assert.deepEqual(
      await controlMisses(w, executable),
      neverMadeBy(executable),
      "these attacks did not reach the attacker even unguarded",
    );
  });
}

/**
 * Benign browsing behind the guard, in the default run's own runtime and session (before the
 * attacks): links, back, a GET form; read_only keeps every write off the site.
 */
async function benign({ w, runtime, c }: GuardedRun): Promise<void> {
  const home = await c.call("browser_navigate", { url: `${w.site.origin}/` });
  const first = await c.call("browser_click", { ref: refOf(home.text, /"First results" ->/) });
  assert.match(first.text, /# Results for first/);
  const back = await c.call("browser_navigate_back");
  assert.match(back.text, /# Hostile home/);
  const typed = await c.call("browser_type", {
    ref: refOf(back.text, /textbox "Search"/),
    text: "shoes",
    submit: true,
  });
  assert.match(typed.text, /# Results for shoes/, typed.text);
  const again = await c.call("browser_navigate", { url: `${w.site.origin}/` });

  // Writes: an agent submit, a page script's POST, and a form POST that would be 307'd.
  const save = await c.call("browser_click", { ref: refOf(again.text, /button "Save"$/) });
  assert.match(save.text, /^denied: READ_ONLY_SUBMIT \(POST form to /);
  const start = (await runtime.audit.rows()).at(-1)!.seq;
  const byScript = await c.call("browser_click", {
    ref: refOf(again.text, /button "Save by script"/),
  });
  assert.ok(
    await eventually(async () =>
      (await runtime.audit.rows(start)).some((r) =>
        r.method === "POST" && r.reason === "READ_ONLY_WRITE"
      )
    ),
    "the script's POST is refused as READ_ONLY_WRITE",
  );
  const snap = await c.call("browser_snapshot");
  assert.match(
    byScript.text + snap.text,
    /notice: blocked 1 request since the last snapshot: READ_ONLY_WRITE: POST http:\/\/127\.0\.0\.1:\d+/,
  );
  const home2 = await c.call("browser_navigate", { url: `${w.site.origin}/` });
  await c.call("browser_click", { ref: refOf(home2.text, /button "Redirect write"/) });
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(w.site.writes, []);
  assert.ok(w.site.hits.includes("GET /redirect307-form"), "the auto-submitting page loaded");
  assert.ok(!w.site.hits.some((h) => h.startsWith("POST")), w.site.hits.join(", "));
}

// One runtime and session for both: benign browsing first (a step of its own, whose failure
// fails it alone), then every attack, which must still reach nothing.
Deno.test("attack suite: nothing reaches the attacker through Omotai, every block is audited", async (t) => {
  await attackSuite("all", {}, (run) =>
    t.step(
      "benign browsing works behind the guard; read_only keeps every write off the site",
      () => benign(run),
    ));
});
