/**
 * Pointer gestures on resolved elements: hover, drag (plain mouse drags and native HTML5
 * drag and drop), a slider's value, and an element's box for screenshots. Every gesture lands
 * where `pointerPoint()` says, so it reaches only the element the gate judged.
 *
 * @module
 */
import type { CdpSession, Protocol } from "../../cdp/mod.ts";
import { ElementActionError } from "../mod.ts";
import {
  callOnElement,
  type Element,
  elementPlace,
  pointerPoint,
  type ViewportBox,
} from "./element_ops.ts";

/** Intermediate mouse positions of a drag: drag libraries look for movement, not a jump. */
const DRAG_STEPS = 8;
/** How far the first move goes: past Chromium's drag threshold, so a native drag starts. */
const DRAG_START_PX = 8;
/**
 * How long a native drag may take to be reported after the first move; later reports are
 * still followed, so this only trades latency of mouse drags against early detection.
 */
const DRAG_DETECT_MS = 150;
/** The last look for a late native drag before releasing the button. */
const DRAG_LATE_MS = 50;

/** Moves the mouse onto the element's center (after checking nothing covers it). */
export async function hoverElement(el: Element): Promise<void> {
  const { x, y } = await pointerPoint(el);
  await el.page.send("Input.dispatchMouseEvent", { type: "mouseMoved", x, y, buttons: 0 });
}

/** How a drag went: a native HTML5 drag and drop, or a plain mouse drag. */
export type DragKind = "html5" | "mouse";

/**
 * Drags `from` onto `to`: press on `from`'s center, move in steps, release on `to`'s
 * center. Chromium's drag interception stays on for the whole gesture: once the page starts
 * a native (HTML5) drag, the rest goes as drag events, since synthetic mouse events alone
 * never drop; a page that handles the mouse itself sees plain mousedown, mousemove, mouseup.
 */
export async function dragElement(from: Element, to: Element): Promise<DragKind> {
  const page = from.page;
  // Both ends are checked before any input: a covered or hidden end fails with nothing sent.
  await pointerPoint(to);
  const start = await pointerPoint(from);
  const drag = new DragWatch(page);
  let kind: DragKind | undefined;
  let pressed = false;
  let at = start;
  try {
    await page.send("Input.setInterceptDrags", { enabled: true });
    await page.send("Input.dispatchMouseEvent", { type: "mouseMoved", ...start, buttons: 0 });
    pressed = true;
    await mouse(page, "mousePressed", start);
    at = { x: start.x + DRAG_START_PX, y: start.y };
    await mouse(page, "mouseMoved", at);
    await drag.settle(DRAG_DETECT_MS);
    // Again after the press: when both ends do not fit on screen, reaching this one scrolls,
    // as a user's wheel would mid-drag.
    const end = await pointerPoint(to);
    const first = at;
    let entered = false;
    for (let i = 1; i <= DRAG_STEPS; i++) {
      at = {
        x: first.x + (end.x - first.x) * (i / DRAG_STEPS),
        y: first.y + (end.y - first.y) * (i / DRAG_STEPS),
      };
      if (drag.data) {
        const type = entered ? "dragOver" : "dragEnter";
        await page.send("Input.dispatchDragEvent", { type, ...at, data: drag.data });
        entered = true;
      } else await mouse(page, "mouseMoved", at);
    }
    if (!drag.data) await drag.settle(DRAG_LATE_MS);
    const data = drag.data;
    if (data) {
      if (!entered) await page.send("Input.dispatchDragEvent", { type: "dragEnter", ...end, data });
      await page.send("Input.dispatchDragEvent", { type: "drop", ...end, data });
    } else await mouse(page, "mouseReleased", end);
    kind = data ? "html5" : "mouse";
  } finally {
    drag.stop();
    await page.send("Input.setInterceptDrags", { enabled: false }).catch(() => {});
    // A drag that failed half-way, or was reported too late to drop, must not stay held.
    if (drag.data && kind !== "html5") {
      await page.send("Input.dispatchDragEvent", { type: "dragCancel", ...at, data: drag.data })
        .catch(() => {});
    } else if (pressed && !kind) await mouse(page, "mouseReleased", at).catch(() => {});
  }
  return kind;
}

function mouse(
  page: CdpSession,
  type: "mouseMoved" | "mousePressed" | "mouseReleased",
  at: { x: number; y: number },
): Promise<unknown> {
  return page.send("Input.dispatchMouseEvent", {
    type,
    ...at,
    button: "left",
    buttons: type === "mouseReleased" ? 0 : 1,
    clickCount: type === "mouseMoved" ? 0 : 1,
  });
}

/** Follows `Input.dragIntercepted`: Chromium's report that the page started a native drag. */
class DragWatch {
  data: Protocol.Input.DragData | undefined;
  #stopped = false;
  #wake: (() => void) | undefined;
  readonly #off: () => void;

  constructor(page: CdpSession) {
    this.#off = page.on("Input.dragIntercepted", (e) => {
      if (this.#stopped) return;
      this.data ??= e.data;
      this.#wake?.();
    });
  }

  /** Waits up to `ms` for a drag report, unless one came already. */
  async settle(ms: number): Promise<void> {
    if (this.data) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      this.#wake = () => {
        clearTimeout(t);
        resolve();
      };
    });
    this.#wake = undefined;
  }

  stop(): void {
    this.#stopped = true;
    this.#off();
  }
}

const SET_RANGE = `function (value) {
  if (!(this instanceof HTMLInputElement) || this.type !== "range") return "NOT_A_SLIDER";
  if (this.disabled || this.readOnly) return "DISABLED";
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) return "NOT_A_NUMBER";
  this.focus();
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  setter.call(this, String(n));
  this.dispatchEvent(new Event("input", { bubbles: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
  return "OK";
}`;

/** Whether `el` is an `<input type=range>`. */
export function isRangeInput(el: Element): Promise<boolean> {
  return callOnElement<boolean>(
    el,
    `function () { return this instanceof HTMLInputElement && this.type === "range"; }`,
  );
}

/**
 * Sets a range input to `value` (clamped and stepped by the browser), firing the input and
 * change events its thumb would.
 */
export async function setRangeValue(el: Element, value: string): Promise<void> {
  const res = await callOnElement<string>(el, SET_RANGE, [value]);
  if (res === "NOT_A_SLIDER") {
    throw new ElementActionError("NOT_A_SLIDER", `${el.ref} is not a slider`);
  }
  if (res === "DISABLED") throw new ElementActionError("NOT_EDITABLE", `${el.ref} is disabled`);
  if (res === "NOT_A_NUMBER") {
    throw new ElementActionError("NOT_A_NUMBER", `a slider value must be a number`);
  }
}

/**
 * Scrolls `el` into view and finds the part of its box inside the tab's viewport (client
 * coordinates, CSS pixels): what a screenshot of it shows. `NOT_VISIBLE` when none is.
 */
export async function visibleBox(el: Element): Promise<ViewportBox> {
  const { box } = await elementPlace(el);
  const { cssVisualViewport: v } = await el.page.send("Page.getLayoutMetrics");
  const x = Math.max(box.x, 0);
  const y = Math.max(box.y, 0);
  const right = Math.min(box.x + box.width, v.clientWidth);
  const bottom = Math.min(box.y + box.height, v.clientHeight);
  if (right - x < 1 || bottom - y < 1) {
    throw new ElementActionError("NOT_VISIBLE", `${el.ref} has no visible box`);
  }
  return { x, y, width: right - x, height: bottom - y };
}
