/**
 * The one request a login form the runtime filled may send: its method, its action URL and
 * the entry list it holds, read in the runtime's isolated world the way the browser builds
 * it for an implicit submission (Enter), without dispatching anything the page hears (no
 * `formdata` or `submit` event: a page listener must not see or change what is expected).
 * The login's write hold lets exactly this through and nothing else.
 *
 * @module
 */
import type { CdpSession } from "../../cdp/mod.ts";

/** What a filled login form submits. */
export interface FormSubmission {
  method: string;
  url: string;
  entries: [string, string][];
  /**
   * `fetch`: not a form's navigation but the runtime's own request from its isolated world
   * (a capture's code conversion): exactly this method and URL, with no body.
   */
  request?: "navigation" | "fetch";
  /**
   * The browsing context the submission's answer loads in, as read (the submitter's
   * `formtarget`, the form's `target`, or `<base target>`); empty for the tab itself.
   */
  target?: string;
}

// Prototype getters (a page may clobber properties on its elements and forms). Follows the
// HTML "constructing the entry list" steps for the controls a login form has; anything it
// cannot know (a file input, a form-associated custom element) makes the result null, so
// the login writes nothing rather than something unchecked.
const ENTRY_LIST = `function () {
  const get = (proto, name, obj) => Object.getOwnPropertyDescriptor(proto, name).get.call(obj);
  const el = this;
  const form = el.form instanceof HTMLFormElement ? el.form : null;
  if (!form) return null;
  const elements = [...get(HTMLFormElement.prototype, "elements", form)];
  const submitTypes = (e) =>
    (e instanceof HTMLButtonElement && get(HTMLButtonElement.prototype, "type", e) === "submit") ||
    (e instanceof HTMLInputElement && ["submit", "image"].includes(get(HTMLInputElement.prototype, "type", e)));
  const submitter = elements.find(submitTypes) || null;
  let method = get(HTMLFormElement.prototype, "method", form);
  let action = get(HTMLFormElement.prototype, "action", form);
  let enctype = get(HTMLFormElement.prototype, "enctype", form);
  if (submitter) {
    const proto = submitter instanceof HTMLButtonElement ? HTMLButtonElement.prototype : HTMLInputElement.prototype;
    if (submitter.hasAttribute("formmethod")) method = get(proto, "formMethod", submitter);
    if (submitter.hasAttribute("formaction")) action = get(proto, "formAction", submitter);
    if (submitter.hasAttribute("formenctype")) enctype = get(proto, "formEnctype", submitter);
  }
  if (String(enctype).toLowerCase() !== "application/x-www-form-urlencoded") return null;
  const entries = [];
  for (const e of elements) {
    if (e.closest("datalist")) continue;
    if (e.disabled || e.matches(":disabled")) continue;
    if (!(e instanceof HTMLInputElement || e instanceof HTMLSelectElement ||
      e instanceof HTMLTextAreaElement || e instanceof HTMLButtonElement)) {
      if (e instanceof HTMLObjectElement || e instanceof HTMLOutputElement || e instanceof HTMLFieldSetElement) continue;
      return null; // a form-associated custom element: its value is the page's secret
    }
    const name = e.getAttribute("name") || "";
    if (e instanceof HTMLButtonElement || submitTypes(e)) {
      if (e !== submitter) continue;
      if (e instanceof HTMLInputElement && get(HTMLInputElement.prototype, "type", e) === "image") {
        return null; // the click coordinates are not the runtime's to know
      }
      if (name) entries.push([name, e instanceof HTMLButtonElement ? get(HTMLButtonElement.prototype, "value", e) : get(HTMLInputElement.prototype, "value", e)]);
      continue;
    }
    if (e instanceof HTMLInputElement) {
      const type = get(HTMLInputElement.prototype, "type", e);
      if (["reset", "button"].includes(type)) continue;
      if (type === "file") return null;
      if ((type === "checkbox" || type === "radio") && !get(HTMLInputElement.prototype, "checked", e)) continue;
      if (!name) continue;
      let value = get(HTMLInputElement.prototype, "value", e);
      if ((type === "checkbox" || type === "radio") && !e.hasAttribute("value")) value = "on";
      entries.push([name, value]);
      const dirname = e.getAttribute("dirname");
      if (dirname && ["text", "search"].includes(type)) entries.push([dirname, getComputedStyle(e).direction]);
      continue;
    }
    if (!name) continue;
    if (e instanceof HTMLSelectElement) {
      for (const o of get(HTMLSelectElement.prototype, "options", e)) {
        if (get(HTMLOptionElement.prototype, "selected", o) && !o.disabled) entries.push([name, get(HTMLOptionElement.prototype, "value", o)]);
      }
      continue;
    }
    entries.push([name, get(HTMLTextAreaElement.prototype, "value", e)]);
    const dirname = e.getAttribute("dirname");
    if (dirname) entries.push([dirname, getComputedStyle(e).direction]);
  }
  // Where the submission's document goes: the submitter's formtarget, the form's target, or
  // the document's <base target>; anything but the tab itself opens another one.
  let target = get(HTMLFormElement.prototype, "target", form);
  if (submitter && submitter.hasAttribute("formtarget")) target = submitter.getAttribute("formtarget");
  if (!target) { const base = document.querySelector("base[target]"); if (base) target = base.getAttribute("target"); }
  return { method: String(method || "get").toUpperCase(), url: String(action), entries, target: String(target || "") };
}`;

/**
 * Reads what the form of the field `backendNodeId` (in the main frame `frameId`) submits
 * when Enter is pressed in it; null when it cannot be known exactly.
 */
export async function readFormSubmission(
  page: CdpSession,
  frameId: string,
  backendNodeId: number,
): Promise<FormSubmission | null> {
  const world = await page.send("Page.createIsolatedWorld", {
    frameId,
    worldName: "omotai-login",
    grantUniveralAccess: false,
  });
  const { object } = await page.send("DOM.resolveNode", {
    backendNodeId,
    executionContextId: world.executionContextId,
  });
  if (!object.objectId) return null;
  try {
    const res = await page.send("Runtime.callFunctionOn", {
      objectId: object.objectId,
      functionDeclaration: ENTRY_LIST,
      returnByValue: true,
    });
    if (res.exceptionDetails) return null;
    const v = res.result.value as FormSubmission | null | undefined;
    if (!v || typeof v.method !== "string" || typeof v.url !== "string") return null;
    if (!Array.isArray(v.entries)) return null;
    const entries: [string, string][] = [];
    for (const e of v.entries) {
      if (!Array.isArray(e) || typeof e[0] !== "string" || typeof e[1] !== "string") return null;
      entries.push([e[0], e[1]]);
    }
    return {
      method: v.method,
      url: v.url,
      entries,
      target: typeof v.target === "string" ? v.target : "",
    };
  } finally {
    await page.send("Runtime.releaseObject", { objectId: object.objectId }).catch(() => {});
  }
}
