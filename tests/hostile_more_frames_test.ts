/**
 * Hostile pages of issue 36's second pass (`tests/helpers/hostile_more.ts` says what each case
 * proves), frame trees and documents written while they load: each case in the runtime, and each control in a Chromium driven directly.
 */
import { moreCaseTests, moreControlTest, morePages } from "./helpers/hostile_more.ts";

const { cases, controls } = morePages("frames");
// One runtime for the four cases, as every other seam has. (They had a runtime each while
// /frame-tree's snapshot took half a minute: its renderer, still building frames as the tab
// was left, once met the next navigation judged unresponsive. Its scan now asks a busy
// renderer its reads together and answers in seconds.)
moreCaseTests(cases);
for (const k of controls) moreControlTest(k);
