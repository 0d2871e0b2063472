import assert from "node:assert/strict";
import type { Protocol } from "../../cdp/mod.ts";
import {
  axHidden,
  type ElementFacts,
  IN_PAGE_CONTROL_SHOWN,
  IN_PAGE_PRUNED_COPY,
  IN_PAGE_RULE,
  judge,
  VISIBILITY_RULE,
  VISIBILITY_STYLES,
} from "./visibility.ts";

const shown: ElementFacts = {
  box: true,
  display: "block",
  visibility: "visible",
  contentVisibility: "visible",
  inert: false,
  ariaHidden: null,
};

Deno.test("judge() gives each way of hiding its verdict, the most hiding first", () => {
  assert.equal(judge(shown), "shown");
  assert.equal(judge({ ...shown, display: "none" }), "gone");
  assert.equal(judge({ ...shown, box: false }), "gone");
  assert.equal(judge({ ...shown, box: false, display: "contents" }), "shown");
  assert.equal(judge({ ...shown, inert: true }), "gone");
  assert.equal(judge({ ...shown, contentVisibility: "hidden" }), "contents-gone");
  assert.equal(judge({ ...shown, contentVisibility: "auto" }), "shown");
  assert.equal(judge({ ...shown, ariaHidden: " TRUE " }), "controls-only");
  assert.equal(judge({ ...shown, ariaHidden: "false" }), "shown");
  assert.equal(judge({ ...shown, visibility: "hidden" }), "self-gone");
  assert.equal(judge({ ...shown, visibility: "collapse" }), "self-gone");
  // Combinations: the verdict that hides more wins.
  assert.equal(judge({ ...shown, inert: true, ariaHidden: "true" }), "gone");
  assert.equal(
    judge({ ...shown, contentVisibility: "hidden", ariaHidden: "true" }),
    "contents-gone",
  );
  assert.equal(judge({ ...shown, ariaHidden: "true", visibility: "hidden" }), "controls-only");
});

Deno.test("VISIBILITY_RULE names every verdict, and the DOM snapshot asks for every style judge() reads", () => {
  const verdicts = new Set(VISIBILITY_RULE.map((r) => r.verdict));
  for (const v of ["gone", "contents-gone", "controls-only", "self-gone", "shown"]) {
    assert.ok(verdicts.has(v as never), v);
  }
  assert.deepEqual(VISIBILITY_STYLES, ["display", "visibility", "content-visibility"]);
});

Deno.test("IN_PAGE_RULE runs judge()'s own source on what a live element reports", () => {
  assert.ok(IN_PAGE_RULE.includes(judge.toString()));
  // A stand-in for the page's globals: the in-page function reads only these.
  const run = new Function(
    "getComputedStyle",
    `return ${IN_PAGE_RULE};`,
  )((el: { style: Record<string, string> }) => el.style) as (el: unknown) => string;
  const el = (style: Record<string, string>, attrs: Record<string, string> = {}, box = true) => ({
    style: { display: "block", visibility: "visible", contentVisibility: "visible", ...style },
    checkVisibility: () => box,
    hasAttribute: (n: string) => n in attrs,
    getAttribute: (n: string) => attrs[n] ?? null,
  });
  assert.equal(run(el({})), "shown");
  assert.equal(run(el({ display: "none" })), "gone");
  assert.equal(run(el({}, {}, false)), "gone");
  assert.equal(run(el({}, { inert: "" })), "gone");
  assert.equal(run(el({ contentVisibility: "hidden" })), "contents-gone");
  assert.equal(run(el({}, { "aria-hidden": "true" })), "controls-only");
  assert.equal(run(el({ visibility: "hidden" })), "self-gone");
  // The other in-page sources parse as functions (they are run in Chromium by the tests).
  for (const src of [IN_PAGE_CONTROL_SHOWN, IN_PAGE_PRUNED_COPY]) {
    assert.equal(typeof new Function(`return ${src};`)(), "function");
  }
});

Deno.test("axHidden() hides ignored nodes, except those ignored only for an open modal dialog", () => {
  const node = (
    ignored: boolean,
    reasons: Protocol.Accessibility.AXPropertyName[] = [],
  ): Protocol.Accessibility.AXNode => ({
    nodeId: "1",
    ignored,
    ignoredReasons: reasons.map((name) => ({ name, value: { type: "boolean" } })),
  });
  assert.equal(axHidden(node(false)), false);
  assert.equal(axHidden(node(true)), true);
  assert.equal(axHidden(node(true, ["activeModalDialog"])), false);
  assert.equal(axHidden(node(true, ["activeModalDialog", "inertElement"])), true);
});
