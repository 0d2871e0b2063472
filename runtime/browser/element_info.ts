/**
 * Reads an element, its link and its form from the page, in the runtime's isolated world:
 * the facts of an action on it come from here, never from the model's words.
 *
 * @module
 */
import type { CdpSession } from "../../cdp/mod.ts";
import { callOnElement, type Element } from "./element_ops.ts";

/** What the runtime reads of an element (and its form) before judging an action on it. */
export interface ElementInfo {
  tag: string;
  type: string | null;
  role: string | null;
  href: string | null;
  frameOrigin: string;
  form: { method: string; action: string; fields: { name: string; type: string }[] } | null;
  submitter: boolean;
  enterSubmits: boolean;
  isFrame: boolean;
}

// Runs in the runtime's isolated world: prototypes there are pristine, and reading through
// prototype getters defeats DOM clobbering (`<input name=action>` shadowing form.action).
const ELEMENT_INFO = `function () {
  const get = (proto, name, obj) => Object.getOwnPropertyDescriptor(proto, name).get.call(obj);
  const el = this;
  const link = el.closest ? el.closest("a[href], area[href]") : null;
  let form = null;
  if ("form" in el && el.form instanceof HTMLFormElement) form = el.form;
  else if (el.closest) form = el.closest("form");
  const isSubmitter = (el instanceof HTMLButtonElement && get(HTMLButtonElement.prototype, "type", el) === "submit") ||
    (el instanceof HTMLInputElement && ["submit", "image"].includes(get(HTMLInputElement.prototype, "type", el)));
  let formInfo = null;
  if (form) {
    let method = get(HTMLFormElement.prototype, "method", form);
    let action = get(HTMLFormElement.prototype, "action", form);
    if (isSubmitter && el.hasAttribute("formmethod")) method = el.getAttribute("formmethod");
    if (isSubmitter && el.hasAttribute("formaction")) action = new URL(el.getAttribute("formaction"), document.baseURI).href;
    const elements = [...get(HTMLFormElement.prototype, "elements", form)];
    formInfo = {
      method: String(method || "get").toUpperCase(),
      action: String(action),
      fields: elements.filter((e) => e.name).map((e) => ({ name: String(e.name), type: String(e.type || e.tagName).toLowerCase() })),
    };
  }
  return {
    tag: el.tagName ? el.tagName.toLowerCase() : "",
    type: el.getAttribute ? el.getAttribute("type") : null,
    role: el.getAttribute ? el.getAttribute("role") : null,
    href: link ? link.href : null,
    frameOrigin: location.origin,
    form: formInfo,
    submitter: Boolean(isSubmitter && form),
    // Enter in a single-line field submits its form implicitly.
    enterSubmits: Boolean(form && (isSubmitter || (el instanceof HTMLInputElement &&
      !["checkbox", "radio", "button", "reset", "file", "hidden"].includes(get(HTMLInputElement.prototype, "type", el))))),
    isFrame: el instanceof HTMLIFrameElement || el instanceof HTMLFrameElement,
  };
}`;

/** Reads `el`. */
export function readElementInfo(el: Element): Promise<ElementInfo> {
  return callOnElement<ElementInfo>(el, ELEMENT_INFO);
}

/**
 * Reads the focused element of the main frame, or undefined when nothing can be read
 * (the page's focus may then be anywhere, a child frame included).
 */
export async function readFocusedInfo(
  page: CdpSession,
  mainFrameId: string,
): Promise<ElementInfo | undefined> {
  const world = await page.send("Page.createIsolatedWorld", {
    frameId: mainFrameId,
    worldName: "omotai",
  });
  const res = await page.send("Runtime.evaluate", {
    expression: `(${ELEMENT_INFO}).call(document.activeElement || document.body)`,
    contextId: world.executionContextId,
    returnByValue: true,
  });
  return res.result.value as ElementInfo | undefined;
}

/** A form as a human approving its submission is shown it. */
export interface FormValues {
  method: string;
  action: string;
  /** `self` marks the element the action is on. */
  fields: { name: string; type: string; value: string; self: boolean }[];
}

// Prototype getters again (DOM clobbering); password values never leave the page.
const FORM_VALUES = `function () {
  const get = (proto, name, obj) => Object.getOwnPropertyDescriptor(proto, name).get.call(obj);
  const el = this;
  let form = null;
  if ("form" in el && el.form instanceof HTMLFormElement) form = el.form;
  else if (el.closest) form = el.closest("form");
  if (!form) return null;
  const isSubmitter = (el instanceof HTMLButtonElement && get(HTMLButtonElement.prototype, "type", el) === "submit") ||
    (el instanceof HTMLInputElement && ["submit", "image"].includes(get(HTMLInputElement.prototype, "type", el)));
  let method = get(HTMLFormElement.prototype, "method", form);
  let action = get(HTMLFormElement.prototype, "action", form);
  if (isSubmitter && el.hasAttribute("formmethod")) method = el.getAttribute("formmethod");
  if (isSubmitter && el.hasAttribute("formaction")) action = new URL(el.getAttribute("formaction"), document.baseURI).href;
  const fields = [];
  for (const e of [...get(HTMLFormElement.prototype, "elements", form)].slice(0, 200)) {
    if (!e.name) continue;
    const type = String(e.type || e.tagName).toLowerCase();
    let value;
    if (type === "password") value = "[redacted]";
    else if (type === "checkbox" || type === "radio") { if (!e.checked) continue; value = String(e.value); }
    else if (type === "file") value = [...(e.files || [])].map((f) => f.name).join(", ");
    else if (type === "submit" || type === "button" || type === "reset" || type === "image") { if (e !== el) continue; value = String(e.value); }
    else value = String(e.value);
    fields.push({ name: String(e.name).slice(0, 200), type, value: value.slice(0, 2000), self: e === el });
  }
  return { method: String(method || "get").toUpperCase(), action: String(action), fields };
}`;

/** Reads the form `el` belongs to with its current values (password values redacted). */
export function readFormValues(el: Element): Promise<FormValues | null> {
  return callOnElement<FormValues | null>(el, FORM_VALUES);
}
