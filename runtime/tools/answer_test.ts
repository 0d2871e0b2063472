import assert from "node:assert/strict";
import { parsePolicy } from "../policy/policy_file.ts";
import { actedRefs, answering, answerOf } from "./answer.ts";
import { findTool } from "./find.ts";
import { TOOLS } from "./mod.ts";
import { navigateTool } from "./navigate.ts";
import { toolSettingsFrom } from "./settings.ts";
import { DEFAULT_TOOL_SETTINGS } from "./tool.ts";

Deno.test("answerOf() takes the call's answer, else the policy's views.action_answer, else the card", () => {
  const overview = toolSettingsFrom(parsePolicy("views:\n  action_answer: overview\n"));
  assert.equal(overview.actionAnswer, "overview");
  assert.equal(toolSettingsFrom(parsePolicy("")).actionAnswer, undefined);
  assert.equal(answerOf({}, DEFAULT_TOOL_SETTINGS), "card");
  assert.equal(answerOf({}, overview), "overview");
  assert.equal(answerOf({ answer: "card" }, overview), "card");
  assert.equal(answerOf({ answer: "overview" }, DEFAULT_TOOL_SETTINGS), "overview");
});

Deno.test("parsePolicy() refuses an unknown views key or answer", () => {
  assert.throws(() => parsePolicy("views:\n  action_answer: full\n"), /views\.action_answer/);
  assert.throws(() => parsePolicy("views:\n  answer: card\n"), /views/);
});

Deno.test("answering() adds an optional answer to a tool's schema and says so in its description", () => {
  const tool = answering(navigateTool);
  assert.equal(tool.name, "browser_navigate");
  assert.ok(tool.schema.safeParse({ url: "http://a.test/" }).success, "optional");
  assert.ok(tool.schema.safeParse({ url: "http://a.test/", answer: "overview" }).success);
  assert.ok(!tool.schema.safeParse({ url: "http://a.test/", answer: "all" }).success);
  assert.ok(!tool.schema.safeParse({ url: "http://a.test/", other: 1 }).success, "still strict");
  assert.match(tool.description, /page card/);
  assert.doesNotMatch(tool.description, /Returns the page snapshot/);
});

Deno.test("TOOLS: every tool that ends with a view takes answer; reading tools do not", () => {
  const takes = TOOLS.filter((t) => "answer" in t.schema.shape).map((t) => t.name).sort();
  assert.deepEqual(takes, [
    "browser_click",
    "browser_drag",
    "browser_file_upload",
    "browser_handle_dialog",
    "browser_hover",
    "browser_navigate",
    "browser_navigate_back",
    "browser_press_key",
    "browser_resize",
    "browser_select_option",
    "browser_tabs",
    "browser_type",
    "browser_wait_for",
  ]);
  assert.ok(TOOLS.includes(findTool), "browser_find is listed as it is");
});

Deno.test("actedRefs() reads the refs a call names", () => {
  assert.deepEqual(actedRefs({ ref: "e3", element: "x" }), ["e3"]);
  assert.deepEqual(actedRefs({ startRef: "e1", endRef: "e2" }), ["e1", "e2"]);
  assert.deepEqual(actedRefs({ url: "http://a.test/" }), []);
});
