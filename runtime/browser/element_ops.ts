/**
 * Acting on one element: click, type, select. Page-facing JavaScript runs only in a
 * runtime-owned isolated world, so page scripts cannot patch the functions we call.
 *
 * @module
 */
import { CdpError, type CdpSession } from "../../cdp/mod.ts";
import { ElementActionError, StaleRefError } from "../mod.ts";
import { keyEvents } from "./keys.ts";

/** A resolved element. */
export interface Element {
  /** Session of the target holding the element (a page or an out-of-process iframe). */
  session: CdpSession;
  /** Session of the tab's page, where input events are dispatched. */
  page: CdpSession;
  frameId: string;
  backendNodeId: number;
  ref: string;
  /** The tab's main frame as read when the ref was resolved (for facts and settling). */
  mainFrame: { id: string; url: string };
}

const WORLD = "omotai";

/** Calls `fn` with the element as `this` in an isolated world; returns the JSON result. */
export async function callOnElement<T>(el: Element, fn: string, args: unknown[] = []): Promise<T> {
  const world = await el.session.send("Page.createIsolatedWorld", {
    frameId: el.frameId,
    worldName: WORLD,
    grantUniveralAccess: false,
  });
  const objectId = await resolveObject(el, world.executionContextId, el.backendNodeId);
  try {
    const res = await el.session.send("Runtime.callFunctionOn", {
      objectId,
      functionDeclaration: fn,
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
      awaitPromise: true,
    });
    if (res.exceptionDetails) {
      throw new ElementActionError(
        "ELEMENT_SCRIPT_FAILED",
        `action on ${el.ref} failed in the page`,
      );
    }
    return res.result.value as T;
  } finally {
    await el.session.send("Runtime.releaseObject", { objectId }).catch(() => {});
  }
}

async function resolveObject(el: Element, contextId: number, backendNodeId: number) {
  const stale = () =>
    new StaleRefError(`ref ${el.ref} is no longer in the page; take a new snapshot`);
  let objectId: string | undefined;
  try {
    ({ object: { objectId } } = await el.session.send("DOM.resolveNode", {
      backendNodeId,
      executionContextId: contextId,
    }));
  } catch (err) {
    if (err instanceof CdpError) throw stale();
    throw err;
  }
  if (!objectId) throw stale();
  return objectId;
}

/** Offset of a frame target's viewport inside the tab's top-level viewport. */
async function frameOffset(session: CdpSession): Promise<{ x: number; y: number }> {
  let x = 0;
  let y = 0;
  let s = session;
  while (s.targetInfo?.type === "iframe" && s.parent) {
    const owner = await s.parent.send("DOM.getFrameOwner", { frameId: s.targetInfo.targetId });
    await s.parent.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: owner.backendNodeId })
      .catch(() => {});
    const box = await s.parent.send("DOM.getBoxModel", { backendNodeId: owner.backendNodeId });
    x += box.model.content[0];
    y += box.model.content[1];
    s = s.parent;
  }
  return { x, y };
}

/** A rectangle in the tab's top-level viewport, in CSS pixels. */
export interface ViewportBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** An element's place on screen: its bounding box and center. */
export interface ElementPlace {
  /** Bounding box in the tab's top-level viewport (where screenshots are addressed). */
  box: ViewportBox;
  /** Center in the tab's top-level viewport (where input events are addressed). */
  center: { x: number; y: number };
  /** Center in the element's own frame viewport (where hit tests run). */
  local: { x: number; y: number };
}

/** Scrolls `el` into view and finds its place on screen; `NOT_VISIBLE` when it has no box. */
export async function elementPlace(el: Element): Promise<ElementPlace> {
  const noBox = () => new ElementActionError("NOT_VISIBLE", `${el.ref} has no visible box`);
  try {
    await el.session.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: el.backendNodeId });
  } catch (err) {
    if (err instanceof CdpError) throw noBox();
    throw err;
  }
  const { quads } = await el.session.send("DOM.getContentQuads", {
    backendNodeId: el.backendNodeId,
  }).catch(() => ({ quads: [] as number[][] }));
  const quad = quads.find((q) => area(q) > 1);
  if (!quad) throw noBox();
  const xs = [quad[0], quad[2], quad[4], quad[6]];
  const ys = [quad[1], quad[3], quad[5], quad[7]];
  const local = { x: (xs[0] + xs[1] + xs[2] + xs[3]) / 4, y: (ys[0] + ys[1] + ys[2] + ys[3]) / 4 };
  const offset = await frameOffset(el.session);
  return {
    box: {
      x: Math.min(...xs) + offset.x,
      y: Math.min(...ys) + offset.y,
      width: Math.max(...xs) - Math.min(...xs),
      height: Math.max(...ys) - Math.min(...ys),
    },
    center: { x: local.x + offset.x, y: local.y + offset.y },
    local,
  };
}

/**
 * Where a pointer acting on `el` lands, in the tab's top-level viewport: its center, after
 * checking that nothing covers it there (`CLICK_INTERCEPTED`), so input reaches only the
 * element the gate judged.
 */
export async function pointerPoint(el: Element): Promise<{ x: number; y: number }> {
  const place = await elementPlace(el);
  await assertHitTarget(el, place.local);
  return place.center;
}

/** Clicks the element's center after checking that nothing covers it. */
export async function clickElement(el: Element): Promise<void> {
  const { x, y } = await pointerPoint(el);
  const base = { x, y, button: "left" as const, clickCount: 1 };
  await el.page.send("Input.dispatchMouseEvent", { type: "mouseMoved", x, y });
  await el.page.send("Input.dispatchMouseEvent", { type: "mousePressed", ...base, buttons: 1 });
  await el.page.send("Input.dispatchMouseEvent", { type: "mouseReleased", ...base, buttons: 0 });
}

/**
 * Refuses input that would land on another element (an overlay, a clickjacking layer). A
 * point that cannot be checked is refused too: an unverified click could land anywhere.
 */
async function assertHitTarget(el: Element, p: { x: number; y: number }): Promise<void> {
  const intercepted = (why: string) =>
    new ElementActionError("CLICK_INTERCEPTED", `${why} ${el.ref} at its center; nothing was sent`);
  // Quads are in viewport coordinates, the hit test wants the document's: add the scroll
  // offset as the renderer reports it (page script cannot fake it).
  const metrics = await el.session.send("Page.getLayoutMetrics").catch(() => undefined);
  if (!metrics) throw intercepted("could not check what is at");
  const hit = await el.session.send("DOM.getNodeForLocation", {
    x: Math.round(p.x + metrics.cssLayoutViewport.pageX),
    y: Math.round(p.y + metrics.cssLayoutViewport.pageY),
    includeUserAgentShadowDOM: true,
    ignorePointerEventsNone: true,
  }).catch(() => undefined);
  if (!hit) throw intercepted("could not check what is at");
  if (hit.backendNodeId === el.backendNodeId) return;
  const world = await el.session.send("Page.createIsolatedWorld", {
    frameId: el.frameId,
    worldName: WORLD,
  });
  const hitObject = await el.session.send("DOM.resolveNode", {
    backendNodeId: hit.backendNodeId,
    executionContextId: world.executionContextId,
  }).catch(() => undefined);
  if (!hitObject?.object.objectId) throw intercepted("could not check what is at");
  const inside = await callOnElementWithObject(
    el,
    world.executionContextId,
    hitObject.object.objectId,
  );
  await el.session.send("Runtime.releaseObject", { objectId: hitObject.object.objectId })
    .catch(() => {});
  if (!inside) {
    throw new ElementActionError(
      "CLICK_INTERCEPTED",
      `another element covers ${el.ref} at its center; nothing was sent`,
    );
  }
}

async function callOnElementWithObject(
  el: Element,
  contextId: number,
  otherObjectId: string,
): Promise<boolean> {
  const objectId = await resolveObject(el, contextId, el.backendNodeId);
  try {
    const res = await el.session.send("Runtime.callFunctionOn", {
      objectId,
      functionDeclaration: `function (hit) {
        for (let n = hit; n; n = n.parentNode || n.host) if (n === this) return true;
        const label = this.labels && [...this.labels].some((l) => l === hit || l.contains(hit));
        return Boolean(label);
      }`,
      arguments: [{ objectId: otherObjectId }],
      returnByValue: true,
    });
    return res.result.value === true;
  } finally {
    await el.session.send("Runtime.releaseObject", { objectId }).catch(() => {});
  }
}

const FOCUS_FOR_TYPING = `function () {
  const textTypes = ["", "text", "search", "url", "tel", "email", "password", "number"];
  if (this instanceof HTMLTextAreaElement || (this instanceof HTMLInputElement &&
      textTypes.includes((this.getAttribute("type") || "").toLowerCase()))) {
    if (this.disabled) return "disabled";
    if (this.readOnly) return "readonly";
    this.focus();
    return this.type === "password" ? "password" : "text";
  }
  if (this.isContentEditable) {
    this.focus();
    const range = document.createRange();
    range.selectNodeContents(this);
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    return "rich";
  }
  return "none";
}`;

/** What kind of field took the text. */
export type TypedField = "text" | "password" | "rich";

/** How `typeInto` may type. */
export interface TypeOptions {
  /** Whether a password field may take the text (the policy's `model_may_type_passwords`). */
  passwords?: boolean;
}

/**
 * Replaces the element's text with `text`, firing the input events a user would. A field
 * that is a password field once focused (its page may switch its type as it gets the focus)
 * is refused with `PASSWORD_FIELD` before any key is sent, unless `passwords` allows it.
 */
export async function typeInto(
  el: Element,
  text: string,
  { passwords = false }: TypeOptions = {},
): Promise<TypedField> {
  const kind = await callOnElement<string>(el, FOCUS_FOR_TYPING);
  if (kind === "none") {
    throw new ElementActionError("NOT_EDITABLE", `${el.ref} is not a text field`);
  }
  if (kind === "disabled" || kind === "readonly") {
    throw new ElementActionError("NOT_EDITABLE", `${el.ref} is ${kind}`);
  }
  if (kind === "password" && !passwords) {
    throw new ElementActionError(
      "PASSWORD_FIELD",
      `${el.ref} is a password field as it takes the focus; nothing was typed`,
    );
  }
  if (kind !== "rich") {
    for (const ev of keyEvents("Control+a")) await el.page.send("Input.dispatchKeyEvent", ev);
  }
  if (text === "") {
    await el.page.send("Input.dispatchKeyEvent", {
      type: "rawKeyDown",
      key: "Delete",
      code: "Delete",
      windowsVirtualKeyCode: 46,
      commands: ["deleteForward"],
    });
    await el.page.send("Input.dispatchKeyEvent", { type: "keyUp", key: "Delete", code: "Delete" });
  } else {
    await el.page.send("Input.insertText", { text });
  }
  return kind as TypedField;
}

const SELECT_OPTIONS = `function (values) {
  if (!(this instanceof HTMLSelectElement)) return { error: "NOT_A_SELECT" };
  if (this.disabled) return { error: "DISABLED" };
  const options = [...this.options];
  const picked = [];
  for (const v of values) {
    const t = String(v).trim();
    const o = options.find((o) => o.value === v) || options.find((o) => o.label.trim() === t) ||
      options.find((o) => o.text.trim() === t);
    if (!o) return { error: "NO_SUCH_OPTION", value: v };
    if (o.disabled) return { error: "OPTION_DISABLED", value: v };
    if (!picked.includes(o)) picked.push(o);
  }
  if (!this.multiple && picked.length !== 1) return { error: "SINGLE_SELECT" };
  for (const o of options) o.selected = picked.includes(o);
  this.dispatchEvent(new Event("input", { bubbles: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
  return { selected: picked.map((o) => o.label || o.text) };
}`;

/** Selects options by value or label; returns the labels now selected. */
export async function selectOptions(el: Element, values: string[]): Promise<string[]> {
  const res = await callOnElement<{ error?: string; value?: string; selected?: string[] }>(
    el,
    SELECT_OPTIONS,
    [values],
  );
  if (res.error === "NOT_A_SELECT") {
    throw new ElementActionError("NOT_A_SELECT", `${el.ref} is not a <select>`);
  }
  if (res.error === "DISABLED") {
    throw new ElementActionError("NOT_EDITABLE", `${el.ref} is disabled`);
  }
  if (res.error === "NO_SUCH_OPTION" || res.error === "OPTION_DISABLED") {
    const what = res.error === "NO_SUCH_OPTION" ? "has no option" : "has a disabled option";
    throw new ElementActionError(res.error, `${el.ref} ${what} ${JSON.stringify(res.value)}`);
  }
  if (res.error === "SINGLE_SELECT") {
    throw new ElementActionError("SINGLE_SELECT", `${el.ref} takes exactly one value`);
  }
  return res.selected ?? [];
}

/** Presses a key or chord in the focused element of the tab. */
export async function pressKey(page: CdpSession, key: string): Promise<void> {
  for (const ev of keyEvents(key)) await page.send("Input.dispatchKeyEvent", ev);
}

function area(q: number[]): number {
  let a = 0;
  for (let i = 0; i < 4; i++) {
    const j = (i + 1) % 4;
    a += q[i * 2] * q[j * 2 + 1] - q[j * 2] * q[i * 2 + 1];
  }
  return Math.abs(a / 2);
}
