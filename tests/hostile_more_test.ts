/**
 * Hostile pages of issue 36's second pass (`tests/helpers/hostile_more.ts` says what each case
 * proves), the pages no other `hostile_more_*_test.ts` file runs: each case in the runtime, and
 * each control in a Chromium driven directly.
 */
import { moreCaseTests, moreControlTest, morePages } from "./helpers/hostile_more.ts";

const { cases, controls } = morePages("rest");
moreCaseTests(cases);
for (const k of controls) moreControlTest(k);
