/**
 * Reads the facts of a proposed action from the browser (never from the model's words,
 * except the URL it asks to open, which is parsed and normalized here).
 *
 * @module
 */
import { InvalidArgumentsError } from "../errors.ts";
import { type Facts, FACTS_ABI_VERSION } from "../policy/facts.ts";
import { normalizeOrigin } from "../net/origin.ts";
import { type SessionCounters, sessionFacts, targetOf } from "../policy/fact_builders.ts";
import type { ActionKind } from "../gate/gate.ts";
import type { CdpSession } from "../../cdp/mod.ts";
import type { BrowserSession } from "./browser_session.ts";
import { callOnElement } from "./element_ops.ts";

interface ElementInfo {
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

/** Builds the facts of an action. */
export async function readFacts(
  session: BrowserSession,
  kind: ActionKind,
  args: Readonly<Record<string, unknown>>,
  counters: SessionCounters,
): Promise<Facts> {
  const page = await session.page();
  const { frameTree } = await page.send("Page.getFrameTree");
  const pageOrigin = normalizeOrigin(frameTree.frame.url) ?? null;
  const facts: Facts = {
    abi: FACTS_ABI_VERSION,
    kind,
    target: null,
    method: "GET",
    resource_type: "action",
    initiator: "agent",
    frame: { top: true, origin: pageOrigin },
    form: null,
    element: null,
    session: sessionFacts(counters),
  };
  if (kind === "navigate") {
    facts.target = targetOf(String(args.url));
    if (!facts.target) {
      throw new InvalidArgumentsError(`"${String(args.url).slice(0, 200)}" is not an absolute URL`);
    }
    facts.resource_type = "document";
  } else if (kind === "back") {
    const h = await page.send("Page.getNavigationHistory");
    // With nothing to go back to, the action does nothing: judge it as staying here.
    const prev = h.currentIndex > 0 ? h.entries[h.currentIndex - 1] : undefined;
    // The blank page a tab starts on is not somewhere to go back to (see goBack()).
    const hasPrevious = prev && !(h.currentIndex === 1 && prev.url === "about:blank");
    const previous = hasPrevious ? prev.url : frameTree.frame.url;
    facts.target = targetOf(previous);
    facts.resource_type = "document";
  } else if ((kind === "click" || kind === "type" || kind === "select") && args.ref) {
    const el = await session.resolve(String(args.ref));
    const info = await callOnElement<ElementInfo>(el, ELEMENT_INFO);
    const link = targetOf(info.href);
    facts.frame = {
      top: el.session === el.page && el.frameId === frameTree.frame.id,
      origin: normalizeOrigin(info.frameOrigin) ?? null,
    };
    facts.element = {
      tag: info.tag,
      type: info.type,
      role: info.role,
      link_scheme: link?.scheme ?? null,
      link_origin: link?.origin ?? null,
      link_path: link?.path ?? null,
    };
    if (info.form) {
      const action = targetOf(info.form.action);
      const submits = kind === "click"
        ? info.submitter
        : kind === "type"
        ? args.submit === true
        : false;
      facts.form = {
        method: info.form.method,
        action_origin: action?.origin ?? null,
        action_path: action?.path ?? null,
        submits,
        fields: info.form.fields.slice(0, 200),
      };
      if (submits) facts.method = info.form.method;
    }
    if (!facts.form && link && kind === "click") facts.target = link;
  } else if (kind === "key" && /(^|\+)Enter$/.test(String(args.key))) {
    await keyFacts(page, frameTree.frame.id, facts);
  }
  return facts;
}

/**
 * Enter may submit the form of the focused element: read it in the main frame. Focus inside
 * a child frame cannot be inspected here, so it counts as submitting a form to an unknown
 * destination (which no policy allows).
 */
async function keyFacts(page: CdpSession, mainFrameId: string, facts: Facts): Promise<void> {
  const world = await page.send("Page.createIsolatedWorld", {
    frameId: mainFrameId,
    worldName: "omotai",
  });
  const res = await page.send("Runtime.evaluate", {
    expression: `(${ELEMENT_INFO}).call(document.activeElement || document.body)`,
    contextId: world.executionContextId,
    returnByValue: true,
  });
  const info = res.result.value as ElementInfo | undefined;
  if (!info || info.isFrame) {
    facts.form = {
      method: "POST",
      action_origin: null,
      action_path: null,
      submits: true,
      fields: [],
    };
    return;
  }
  if (info.form && info.enterSubmits) {
    const action = targetOf(info.form.action);
    facts.form = {
      method: info.form.method,
      action_origin: action?.origin ?? null,
      action_path: action?.path ?? null,
      submits: true,
      fields: info.form.fields.slice(0, 200),
    };
    facts.method = info.form.method;
  }
}
