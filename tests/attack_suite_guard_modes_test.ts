/**
 * The attack suite (tests/helpers/attack_suite.ts) with the request guard pausing less than
 * every request: the egress proxy alone must keep every attack out that the guard no longer
 * sees. tests/attack_suite_test.ts holds the controls and the default run.
 *
 * @module
 */
import { attackSuite } from "./helpers/attack_suite.ts";

Deno.test("attack suite with request_guard: documents: the proxy alone keeps every subresource attack out", async () => {
  await attackSuite("documents");
});

Deno.test("attack suite with request_guard: proxy: with nothing paused, the proxy alone keeps every attack out", async () => {
  await attackSuite("proxy");
});
