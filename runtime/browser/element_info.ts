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
  /** An `<input>` whose type is password now (read through the prototype, not the attribute). */
  password: boolean;
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
    // The reflected properties, as the browser submits: an invalid formmethod is GET, not
    // the page's string (which could carry anything, a NUL included, into facts and audit).
    const proto = el instanceof HTMLButtonElement ? HTMLButtonElement.prototype : HTMLInputElement.prototype;
    if (isSubmitter && el.hasAttribute("formmethod")) method = get(proto, "formMethod", el);
    if (isSubmitter && el.hasAttribute("formaction")) action = get(proto, "formAction", el);
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
    password: el instanceof HTMLInputElement && get(HTMLInputElement.prototype, "type", el) === "password",
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

/** What has the focus keys are sent to: a password field, another element, or unknown. */
export type FocusedField = "password" | "other" | "unknown";

/** Frames and shadow roots followed at most when looking for the focused element. */
const MAX_FOCUS_HOPS = 16;
const FOCUS_GROUP = "omotai-focus";

// Isolated world again: the page cannot patch the getter or the prototype chain read here.
const IS_PASSWORD = `function () {
  return this instanceof HTMLInputElement &&
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "type").get.call(this) === "password";
}`;

/**
 * What the tab's keyboard focus is on, followed from the main document down through shadow
 * roots (closed ones too: CDP reaches them) and frames of the tab's own process. Focus in a
 * frame of another process (a cross-site frame) cannot be read from the tab's session:
 * `unknown`, which callers treat as a password field.
 */
export async function readFocusedField(
  page: CdpSession,
  mainFrameId: string,
): Promise<FocusedField> {
  try {
    let frameId = mainFrameId;
    let hops = 0;
    frames: while (hops++ < MAX_FOCUS_HOPS) {
      const world = await page.send("Page.createIsolatedWorld", {
        frameId,
        worldName: "omotai",
      }).catch(() => undefined);
      // A frame the tab's renderer does not hold (another process): nothing to read here.
      if (!world) return "unknown";
      const contextId = world.executionContextId;
      const res = await page.send("Runtime.evaluate", {
        expression: "document.activeElement",
        contextId,
        objectGroup: FOCUS_GROUP,
      });
      let objectId = res.result.objectId;
      while (objectId && hops++ < MAX_FOCUS_HOPS) {
        const { node } = await page.send("DOM.describeNode", { objectId, depth: 1, pierce: true });
        // A frame holds the focus: the element is its document's active one.
        if (node.frameId && /^(I?FRAME|OBJECT|EMBED)$/.test(node.nodeName.toUpperCase())) {
          frameId = node.frameId;
          continue frames;
        }
        // A shadow host holds it: the element is its shadow root's active one (or the host).
        const root = node.shadowRoots?.find((r) => r.shadowRootType !== "user-agent");
        if (root) {
          const { object } = await page.send("DOM.resolveNode", {
            backendNodeId: root.backendNodeId,
            executionContextId: contextId,
            objectGroup: FOCUS_GROUP,
          });
          const inner = object.objectId &&
            (await page.send("Runtime.callFunctionOn", {
              objectId: object.objectId,
              functionDeclaration: "function () { return this.activeElement; }",
              objectGroup: FOCUS_GROUP,
            })).result.objectId;
          if (inner) {
            objectId = inner;
            continue;
          }
        }
        const is = await page.send("Runtime.callFunctionOn", {
          objectId,
          functionDeclaration: IS_PASSWORD,
          returnByValue: true,
        });
        return is.result.value === true ? "password" : "other";
      }
      // Nothing focused in this document (no body yet): keys reach no field.
      return objectId ? "unknown" : "other";
    }
    return "unknown";
  } finally {
    await page.send("Runtime.releaseObjectGroup", { objectGroup: FOCUS_GROUP }).catch(() => {});
  }
}
