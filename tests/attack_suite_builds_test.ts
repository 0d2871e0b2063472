/**
 * The attack suite (tests/helpers/attack_suite.ts) on the other ways the runtime may run: the
 * full browser (`--headful`, the fallback), whose own channels differ, and both builds
 * without a network namespace, where only the browser's own flags keep it on the proxy.
 * tests/attack_suite_test.ts holds the controls and the default run.
 *
 * @module
 */
import { attackSuite, BUILDS, DEFAULT_BROWSER, FULL_BROWSER } from "./helpers/attack_suite.ts";

Deno.test({
  name: "attack suite on the full browser: nothing reaches the attacker, preconnect included",
  ignore: FULL_BROWSER === DEFAULT_BROWSER,
  async fn() {
    await attackSuite("all", { browser: FULL_BROWSER });
  },
});

// Without a namespace (Docker's default seccomp profile, --isolation off) only the browser's
// own flags keep WebRTC's UDP on the proxy, and each build reads its own switch for it.
for (const browser of BUILDS) {
  Deno.test(`attack suite without a network namespace: nothing reaches the attacker (${browser})`, async () => {
    await attackSuite("all", { browser, noNamespace: true });
  });
}
