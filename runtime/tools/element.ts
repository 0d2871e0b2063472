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
import { defineTool, type ToolContext, type ToolDef } from "./tool.ts";

const ref = z.string().min(1).max(32).describe("Element ref from the latest snapshot, e.g. e12");
const element = z.string().max(500).optional()
  .describe("Human-readable description of the element (for logs and approvals)");

/** Resolves the call's ref once; facts and handler share the element. */
const byRef = (ctx: ToolContext, args: { ref: string }): Promise<Element> =>
  ctx.session.resolve(args.ref);

/** Runs an input action on `el` and waits for a navigation it may start. */
const settle = (el: Element, action: () => Promise<void>): Promise<LoadOutcome> =>
  runAndSettle(el.page, action, { mainFrameId: el.mainFrame.id });

/** An input tool as declared: a tool whose `act` runs the action and says what it did. */
type InputToolDef<S extends z.ZodObject, T> =
  & Omit<ToolDef<S, T>, "readOnly" | "destructive" | "handle">
  & {
    /** Runs the allowed action: the line the result starts with, and the load it caused. */
    act(
      ctx: ToolContext,
      args: z.infer<S>,
      target: T,
    ): Promise<{ done: string; outcome: LoadOutcome }>;
  };

/**
 * An input action on the page: it changes state (never read-only, always destructive),
 * answers with the page's snapshot, and says whether a navigation followed it.
 */
function inputTool<S extends z.ZodObject, T = undefined>(def: InputToolDef<S, T>): ToolDef<S, T> {
  const { act, ...tool } = def;
  return defineTool({
    ...tool,
    readOnly: false,
    destructive: true,
    async handle(ctx, args, target) {
      ctx.response.includeSnapshot();
      const { done, outcome } = await act(ctx, args, target);
      const after = outcome.navigated
        ? outcome.timedOut ? "; a new page is still loading" : "; a new page loaded"
        : "";
      ctx.response.result(done + after);
    },
  });
}

export const clickTool = inputTool({
  name: "browser_click",
  title: "Click",
  description: "Click an element by ref. Returns the page snapshot.",
  schema: z.strictObject({ ref, element }),
  kind: "click",
  resolve: byRef,
  facts: (ctx, _args, el) => elementFacts(ctx, "click", el),
  async act(_ctx, args, el) {
    const outcome = await settle(el, () => clickElement(el));
    return { done: `clicked ${args.ref}`, outcome };
  },
});

export const typeTool = inputTool({
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
  resolve: byRef,
  facts: (ctx, args, el) => elementFacts(ctx, "type", el, args.submit === true),
  // Only a submitting call can be a confirm; the typed text is in the form's values.
  async act(ctx, args, el) {
    let field = "text" as TypedField;
    const outcome = await settle(el, async () => {
      field = await typeInto(el, args.text, { passwords: ctx.settings.modelMayTypePasswords });
      if (args.submit) await pressKey(el.page, "Enter");
    }).catch((err) => rethrowAudited(ctx, "type", err));
    if (field !== "password") ctx.response.typed(args.ref, args.text);
    // The text itself is never echoed: the field may be a password.
    const done = `typed into ${args.ref}${field === "password" ? " (password field)" : ""}${
      args.submit ? " and pressed Enter" : ""
    }`;
    return { done, outcome };
  },
});

export const selectOptionTool = inputTool({
  name: "browser_select_option",
  title: "Select options",
  description: "Select options of a <select> by value or label. Returns the page snapshot.",
  schema: z.strictObject({
    ref,
    element,
    values: z.array(z.string().max(1_000)).min(1).max(100).describe("Values or labels to select"),
  }),
  kind: "select",
  resolve: byRef,
  facts: (ctx, _args, el) => elementFacts(ctx, "select", el),
  async act(_ctx, args, el) {
    let count = 0;
    const outcome = await settle(el, async () => {
      count = (await selectOptions(el, args.values)).length;
    });
    return { done: `selected ${count} option(s) in ${args.ref}`, outcome };
  },
});

export const pressKeyTool = inputTool({
  name: "browser_press_key",
  title: "Press a key",
  description:
    'Press a key or chord in the focused element, e.g. "Enter", "ArrowDown", "Control+a". Returns the page snapshot. ' +
    "In a focused password field only keys that type nothing run (PASSWORD_FIELD) unless the operator's policy allows it.",
  schema: z.strictObject({ key: z.string().min(1).max(64).describe("Key name or character") }),
  kind: "key",
  // Validated before the facts are read: a bad key never reaches the page.
  resolve: (_ctx, { key }) => Promise.resolve(void keyEvents(key)),
  facts: (ctx, { key }) => keyFacts(ctx, key),
  async act(ctx, { key }) {
    // Again at action time: the page may have moved the focus since the facts were read.
    await refuseKeyIntoPassword(ctx, key).catch((err) => rethrowAudited(ctx, "key", err));
    const page = await ctx.session.page();
    const outcome = await runAndSettle(page, () => pressKey(page, key));
    return { done: `pressed ${key}`, outcome };
  },
});
