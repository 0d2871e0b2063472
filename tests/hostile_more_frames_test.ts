/**
 * Hostile pages of issue 36's second pass (`tests/helpers/hostile_more.ts` says what each case
 * proves), frame trees and documents written while they load: each case in the runtime, and each control in a Chromium driven directly.
 */
import { moreCaseTests, moreControlTest, morePages } from "./helpers/hostile_more.ts";

const { cases, controls } = morePages("frames");
// A runtime per case here: in one shared runtime /frame-tree's next navigation met a tab the
// runtime had judged unresponsive (2 runs in 3 under load), which a runtime of its own never
// showed; until that is understood the frame pages keep the isolation they always had.
for (const c of cases) moreCaseTests([c]);
for (const k of controls) moreControlTest(k);
