/**
 * browser_fill_form.
 *
 * @module
 */
import { z } from "zod";
import {
  callOnElement,
  clickElement,
  type Element,
  isRangeInput,
  readElementInfo,
  selectOptions,
  setRangeValue,
  typeInto,
} from "../browser/mod.ts";
import { ElementActionError, InvalidArgumentsError, OmotaiError, StaleRefError } from "../mod.ts";
import type { Facts } from "../policy/mod.ts";
import { elementFacts, rethrowAudited } from "./facts.ts";
import { refArg, settle, settledLine } from "./pointer.ts";
import { defineTool, type ToolContext } from "./tool.ts";

/** Fields one call may fill at most. */
const MAX_FIELDS = 50;

const fieldSchema = z.strictObject({
  name: z.string().max(500).describe("Human-readable field name"),
  type: z.enum(["textbox", "checkbox", "radio", "combobox", "slider"]).describe(
    "Type of the field",
  ),
  ref: refArg,
  value: z.string().max(20_000).describe(
    'Value to fill. For a checkbox or radio "true" or "false"; for a combobox the text of the option',
  ),
});

type Field = z.infer<typeof fieldSchema>;

/** A field resolved once, for its facts and its handler. */
interface ResolvedField {
  field: Field;
  el: Element;
}

const CHECKED = `function () {
  if (this instanceof HTMLInputElement && ["checkbox", "radio"].includes(this.type)) {
    return this.checked;
  }
  const aria = this.getAttribute("aria-checked");
  return aria === "true" ? true : aria === "false" ? false : null;
}`;

/**
 * Resolves every field's ref before anything runs. A password field (whatever type the call
 * names for it) is refused here unless the policy opts in, so the refusal is audited as a
 * deny and not one field is filled: credentials are typed by the runtime's own login.
 */
async function resolveFields(ctx: ToolContext, fields: Field[]): Promise<ResolvedField[]> {
  const out: ResolvedField[] = [];
  for (const field of fields) {
    if (
      (field.type === "checkbox" || field.type === "radio") && !/^(true|false)$/.test(field.value)
    ) {
      throw new InvalidArgumentsError(
        `the value of ${field.type} ${field.ref} must be "true" or "false"`,
      );
    }
    const el = await ctx.session.resolve(field.ref);
    // The type as it is now (read through the prototype, in the runtime's world), not as
    // the snapshot showed it or as the attribute spells it.
    const info = await readElementInfo(el).catch((err) => {
      if (err instanceof OmotaiError) throw err;
      throw new StaleRefError(`ref ${field.ref} is no longer in the page; take a new snapshot`);
    });
    if (info.password && !ctx.settings.modelMayTypePasswords) {
      throw new OmotaiError(
        "PASSWORD_FIELD",
        `${field.ref} is a password field: the model does not type passwords (the policy's model_may_type_passwords allows it, for sign-ups); nothing was filled`,
      );
    }
    out.push({ field, el });
  }
  return out;
}

/** One fact set per field, of the kind of input it takes. */
async function fieldFacts(ctx: ToolContext, resolved: ResolvedField[]): Promise<Facts[]> {
  const out: Facts[] = [];
  for (const { field, el } of resolved) {
    const kind = field.type === "checkbox" || field.type === "radio"
      ? "click"
      : field.type === "combobox"
      ? "select"
      : "type";
    out.push(await elementFacts(ctx, kind, el));
  }
  return out;
}

/** What filling one field did. */
type Filled = "typed" | "clicked" | "unchanged" | "selected" | "set";

async function fill({ field, el }: ResolvedField, passwords: boolean): Promise<Filled> {
  switch (field.type) {
    case "textbox":
      await typeInto(el, field.value, { passwords });
      return "typed";
    case "slider":
      if (await isRangeInput(el)) {
        await setRangeValue(el, field.value);
        return "set";
      }
      await typeInto(el, field.value, { passwords });
      return "typed";
    case "combobox":
      try {
        await selectOptions(el, [field.value]);
      } catch (err) {
        // Those messages quote the value asked for; this tool never echoes values.
        if (err instanceof ElementActionError && /OPTION/.test(err.code)) {
          throw new ElementActionError(err.code, `${field.ref} has no such enabled option`);
        }
        throw err;
      }
      return "selected";
    case "checkbox":
    case "radio": {
      const want = field.value === "true";
      const now = await callOnElement<boolean | null>(el, CHECKED);
      if (now === null) {
        throw new ElementActionError("NOT_CHECKABLE", `${field.ref} is not a ${field.type}`);
      }
      if (now === want) return "unchanged";
      if (!want && field.type === "radio") {
        throw new ElementActionError(
          "NOT_CHECKABLE",
          `${field.ref}: a radio button is cleared by checking another one`,
        );
      }
      await clickElement(el);
      if (await callOnElement<boolean | null>(el, CHECKED) !== want) {
        throw new ElementActionError("CHECK_FAILED", `${field.ref} did not change when clicked`);
      }
      return "clicked";
    }
  }
}

export const fillFormTool = defineTool({
  name: "browser_fill_form",
  title: "Fill form",
  description:
    "Fill several form fields by ref: textboxes and sliders get text, checkboxes and radios " +
    '"true"/"false", comboboxes an option. Password fields are refused unless the operator\'s ' +
    "policy allows them. Values are never echoed back; take a snapshot to see the page.",
  schema: z.strictObject({
    fields: z.array(fieldSchema).min(1).max(MAX_FIELDS).describe("Fields to fill in"),
  }),
  kind: "type",
  readOnly: false,
  destructive: true,
  resolve: (ctx, args) => resolveFields(ctx, args.fields),
  facts: (ctx, _args, resolved) => fieldFacts(ctx, resolved),
  async handle(ctx, _args, resolved) {
    const counts = new Map<Filled, number>();
    let done = 0;
    const outcome = await settle(resolved[0].el, async () => {
      for (const r of resolved) {
        const what = await fill(r, ctx.settings.modelMayTypePasswords === true);
        counts.set(what, (counts.get(what) ?? 0) + 1);
        done++;
      }
    }).catch((err) => {
      // The fields filled before the failure stay filled: say how many.
      if (done > 0) {
        ctx.response.result(`filled ${done} of ${resolved.length} field(s) before failing`);
      }
      rethrowAudited(ctx, "type", err);
    });
    // Counts only: a value may be personal, and the snapshot is the model's to ask for.
    const parts = [...counts].map(([what, n]) => `${n} ${what}`).join(", ");
    ctx.response.result(settledLine(`filled ${resolved.length} field(s): ${parts}`, outcome));
  },
});
