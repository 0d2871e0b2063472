/**
 * The attack suite (tests/helpers/attack_suite.ts) on the full browser (`--headful`, the
 * fallback), whose own channels differ: as it runs by default, and without a network
 * namespace with nothing paused. tests/attack_suite_test.ts holds the controls and the default
 * run; the default build without a namespace is in tests/attack_suite_guard_modes_test.ts.
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
// own flags keep it on the proxy, WebRTC's UDP included, and each build reads its own switch
// for that. Nothing paused: every attack then rests on those flags and the proxy alone (the
// request guard, were it pausing, would refuse most before the flags mattered). A namespace
// only takes routes away, so this also stands for the proxy alone inside one.
for (const browser of BUILDS.filter((b) => b !== DEFAULT_BROWSER)) {
  Deno.test(`attack suite without a network namespace, nothing paused: the flags and the proxy alone keep every attack out (${browser})`, async () => {
    await attackSuite("proxy", { browser, noNamespace: true });
  });
}
