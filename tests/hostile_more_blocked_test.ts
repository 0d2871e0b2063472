/**
 * Hostile pages of issue 36's second pass (`tests/helpers/hostile_more.ts` says what each case
 * proves), the ones whose main thread blocks on a request that never answers: each case in the
 * runtime, and each control in a Chromium driven directly.
 */
import { moreCaseTests, moreControlTest, morePages } from "./helpers/hostile_more.ts";

const { cases, controls } = morePages("blocked");
moreCaseTests(cases);
for (const k of controls) moreControlTest(k);
