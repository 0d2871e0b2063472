/**
 * Hostile pages of issue 36's second pass (`tests/helpers/hostile_more.ts` says what each case
 * proves), the ones that hold their origin or spin as they are left: each case in the runtime, and
 * each control in a Chromium driven directly.
 */
import { moreCaseTests, moreControlTest, morePages } from "./helpers/hostile_more.ts";

const { cases, controls } = morePages("leave");
moreCaseTests(cases);
for (const k of controls) moreControlTest(k);
