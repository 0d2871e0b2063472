/**
 * browser_click, browser_type, browser_select_option, browser_press_key.
 *
 * @module
 */
import { z } from "zod";
import {
  clickElement,
  type Element,
  keyEvents,
  type LoadOutcome,
  pressKey,
  runAndSettle,
  selectOptions,
  type TypedField,
  typeInto,
} from "../browser/mod.ts";
import { elementFacts, keyFacts, refuseKeyIntoPassword, rethrowAudited } from "./facts.ts";
import { defineTool, type ToolContext } from "./tool.ts";

const ref = z.string().min(1).max(32).describe("Element ref from the latest snapshot, e.g. e12");
const element = z.string().max(500).optional()
  .describe("Human-readable description of the element (for logs and approvals)");

/** Resolves the call's ref once; facts and handler share the element. */
const byRef = (ctx: ToolContext, args: { ref: string }): Promise<Element> =>
  ctx.session.resolve(args.ref);

/** Runs an input action on `el` and waits for a navigation it may start. */
const settle = (el: Element, action: () => Promise<void>): Promise<LoadOutcome> =>
  runAndSettle(el.page, action, { mainFrameId: el.mainFrame.id });

function settled(ctx: ToolContext, line: string, outcome: LoadOutcome): void {
  const after = outcome.navigated
    ? outcome.timedOut ? "; a new page is still loading" : "; a new page loaded"
    : "";
  ctx.response.result(line + after);
}

export const clickTool = defineTool({
  name: "browser_click",
  title: "Click",
  description: "Click an element by ref. Returns the page snapshot.",
  schema: z.strictObject({ ref, element }),
  kind: "click",
  readOnly: false,
  destructive: true,
  resolve: byRef,
  facts: (ctx, _args, el) => elementFacts(ctx, "click", el),
  async handle(ctx, args, el) {
    ctx.response.includeSnapshot();
    const outcome = await settle(el, () => clickElement(el));
    settled(ctx, `clicked ${args.ref}`, outcome);
  },
});

export const typeTool = defineTool({
  name: "browser_type",
  title: "Type text",
  description:
    "Replace the text of an editable element by ref; `submit` presses Enter afterwards. Returns the page snapshot. " +
    "Password fields are refused (PASSWORD_FIELD) unless the operator's policy allows them.",
  schema: z.strictObject({
    ref,
    element,
    text: z.string().max(20_000).describe("Text to type"),
    submit: z.boolean().optional().describe("Press Enter after typing"),
  }),
  kind: "type",
  readOnly: false,
  destructive: true,
  resolve: byRef,
  facts: (ctx, args, el) => elementFacts(ctx, "type", el, args.submit === true),
  // Only a submitting call can be a confirm; the typed text is in the form's values.
  async handle(ctx, args, el) {
    ctx.response.includeSnapshot();
    let field = "text" as TypedField;
    const outcome = await settle(el, async () => {
      field = await typeInto(el, args.text, { passwords: ctx.settings.modelMayTypePasswords });
      if (args.submit) await pressKey(el.page, "Enter");
    }).catch((err) => rethrowAudited(ctx, "type", err));
    if (field !== "password") ctx.response.typed(args.ref, args.text);
    // The text itself is never echoed: the field may be a password.
    const what = `typed into ${args.ref}${field === "password" ? " (password field)" : ""}${
      args.submit ? " and pressed Enter" : ""
    }`;
    settled(ctx, what, outcome);
  },
});

export const selectOptionTool = defineTool({
  name: "browser_select_option",
  title: "Select options",
  description: "Select options of a <select> by value or label. Returns the page snapshot.",
  schema: z.strictObject({
    ref,
    element,
    values: z.array(z.string().max(1_000)).min(1).max(100).describe("Values or labels to select"),
  }),
  kind: "select",
  readOnly: false,
  destructive: true,
  resolve: byRef,
  facts: (ctx, _args, el) => elementFacts(ctx, "select", el),
  async handle(ctx, args, el) {
    ctx.response.includeSnapshot();
    let count = 0;
    const outcome = await settle(el, async () => {
      count = (await selectOptions(el, args.values)).length;
    });
    settled(ctx, `selected ${count} option(s) in ${args.ref}`, outcome);
  },
});

export const pressKeyTool = defineTool({
  name: "browser_press_key",
  title: "Press a key",
  description:
    'Press a key or chord in the focused element, e.g. "Enter", "ArrowDown", "Control+a". Returns the page snapshot. ' +
    "In a focused password field only keys that type nothing run (PASSWORD_FIELD) unless the operator's policy allows it.",
  schema: z.strictObject({ key: z.string().min(1).max(64).describe("Key name or character") }),
  kind: "key",
  readOnly: false,
  destructive: true,
  // Validated before the facts are read: a bad key never reaches the page.
  resolve: (_ctx, { key }) => Promise.resolve(void keyEvents(key)),
  facts: (ctx, { key }) => keyFacts(ctx, key),
  async handle(ctx, { key }) {
    ctx.response.includeSnapshot();
    // Again at action time: the page may have moved the focus since the facts were read.
    await refuseKeyIntoPassword(ctx, key).catch((err) => rethrowAudited(ctx, "key", err));
    const page = await ctx.session.page();
    const outcome = await runAndSettle(page, () => pressKey(page, key));
    settled(ctx, `pressed ${key}`, outcome);
  },
});
