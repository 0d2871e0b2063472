/**
 * The attack suite (tests/helpers/attack_suite.ts) with the request guard pausing less than
 * every request: the egress proxy alone must keep every attack out that the guard no longer
 * sees. With nothing paused it runs without a network namespace too, where only the browser's
 * own flags keep the browser on the proxy (the full browser's run of it is in
 * tests/attack_suite_builds_test.ts). tests/attack_suite_test.ts holds the controls and the
 * default run.
 *
 * @module
 */
import { attackSuite, DEFAULT_BROWSER } from "./helpers/attack_suite.ts";

Deno.test("attack suite with request_guard: documents: the proxy alone keeps every subresource attack out", async () => {
  await attackSuite("documents");
});

// A namespace only takes routes away: with nothing paused and none, every attack rests on the
// browser's own flags (WebRTC's UDP included, the shell reading its own switch for it) and
// the proxy alone, which is also what the proxy alone inside a namespace must hold.
Deno.test(`attack suite with request_guard: proxy, without a network namespace: the flags and the proxy alone keep every attack out (${DEFAULT_BROWSER})`, async () => {
  await attackSuite("proxy", { browser: DEFAULT_BROWSER, noNamespace: true });
});
