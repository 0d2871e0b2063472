/**
 * The browser steps a capture workflow is made of, over CDP: open a page and insist on its
 * origin, find exactly one element by a workflow's fixed selector, run the workflow's own
 * function in the runtime's isolated world (which the page cannot see), type a template
 * value, and send one request under the capture's write hold so that exactly that request
 * leaves. None of them takes a selector, a URL or a value from the model.
 *
 * @module
 */
import type { CdpSession } from "../../cdp/mod.ts";
import { keyEvents, mainFrameId, navigate, runAndSettle } from "../browser/mod.ts";
import type { RuntimeWrite, RuntimeWriteHold } from "../login/mod.ts";
import { normalizeOrigin } from "../net/mod.ts";
import { CaptureError } from "./capture_error.ts";

const WORLD = "omotai-capture";
/** How long a step's submission may take to reach the egress proxy. */
const SUBMIT_WAIT_MS = 5_000;

/** The main frame's document: its frame id, URL and origin (`null` for an opaque one). */
export interface Here {
  frameId: string;
  url: string;
  origin: string | null;
}

/** The document the tab shows now. */
export async function here(page: CdpSession): Promise<Here> {
  const frame = await mainFrameId(page);
  const url = frame.unreachableUrl ?? frame.url;
  return { frameId: frame.id, url, origin: normalizeOrigin(url) ?? null };
}

/** Fails `CAPTURE_PAGE_UNEXPECTED` unless the tab's document is on `origin`. */
export async function requireOrigin(page: CdpSession, origin: string, what: string): Promise<Here> {
  const at = await here(page);
  if (at.origin !== origin) {
    // Never the origin the tab is on: a host name is page data, and may carry a value.
    throw new CaptureError(
      "CAPTURE_PAGE_UNEXPECTED",
      `${what} is not on the template's origin (the tab is on ${
        at.origin === null ? "an opaque document" : "another origin"
      })`,
    );
  }
  return at;
}

/** Opens `url` in the tab; fails `CAPTURE_PAGE_UNEXPECTED` unless it loads on its origin. */
export async function open(page: CdpSession, url: string, what: string): Promise<Here> {
  const out = await navigate(page, url);
  if (out.error) throw new CaptureError("CAPTURE_PAGE_UNEXPECTED", `${what} did not load`);
  return await requireOrigin(page, normalizeOrigin(url)!, what);
}

/** Leaves whatever the tab shows (a callback URL, a page showing a secret) for a blank one. */
export async function leave(page: CdpSession): Promise<void> {
  await navigate(page, "about:blank").catch(() => {});
}

/**
 * The backend node of the one element `selector` matches in the main document; fails
 * `CAPTURE_PAGE_UNEXPECTED` for none or several (a changed page is never guessed at).
 */
export async function only(page: CdpSession, selector: string, what: string): Promise<number> {
  const { root } = await page.send("DOM.getDocument", { depth: 0 });
  const { nodeIds } = await page.send("DOM.querySelectorAll", { nodeId: root.nodeId, selector });
  if (nodeIds.length !== 1) {
    throw new CaptureError(
      "CAPTURE_PAGE_UNEXPECTED",
      `the page does not hold exactly one ${what} (found ${nodeIds.length})`,
    );
  }
  const { node } = await page.send("DOM.describeNode", { nodeId: nodeIds[0] });
  return node.backendNodeId;
}

/**
 * Runs `fn` (the workflow's own function source) in the runtime's isolated world of the main
 * frame, with `node` as `this` when given; its JSON result. A throw in the page's world is
 * `CAPTURE_PAGE_UNEXPECTED`.
 */
export async function inWorld<T>(
  page: CdpSession,
  fn: string,
  args: unknown[] = [],
  node?: number,
): Promise<T> {
  const { frameId } = await here(page);
  const world = await page.send("Page.createIsolatedWorld", {
    frameId,
    worldName: WORLD,
    grantUniveralAccess: false,
  });
  let objectId: string | undefined;
  if (node !== undefined) {
    ({ object: { objectId } } = await page.send("DOM.resolveNode", {
      backendNodeId: node,
      executionContextId: world.executionContextId,
    }));
  }
  try {
    const res = await page.send("Runtime.callFunctionOn", {
      functionDeclaration: fn,
      ...(objectId ? { objectId } : { executionContextId: world.executionContextId }),
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
      awaitPromise: true,
    }, { timeoutMs: 30_000 });
    // Only that it threw: an exception's text could quote the page.
    if (res.exceptionDetails) {
      throw new CaptureError("CAPTURE_PAGE_UNEXPECTED", "the workflow's step failed in the page");
    }
    return res.result.value as T;
  } finally {
    if (objectId) await page.send("Runtime.releaseObject", { objectId }).catch(() => {});
  }
}

/** Replaces a field's text with `value` by CDP input (focus, select all, one insertion). */
export async function typeInto(page: CdpSession, node: number, value: string): Promise<void> {
  await page.send("DOM.focus", { backendNodeId: node });
  for (const ev of keyEvents("Control+a")) await page.send("Input.dispatchKeyEvent", ev);
  if (value !== "") await page.send("Input.insertText", { text: value });
  else for (const ev of keyEvents("Delete")) await page.send("Input.dispatchKeyEvent", ev);
}

/**
 * Sends one navigation the capture expects (a form's submission, as read or as built) under
 * the capture's write hold: exactly `write` may leave, to an origin the template names;
 * anything else the page sends meanwhile is refused, and nothing at all once the step is
 * over. The answer must load in this tab: a submission aimed at another browsing context
 * (`target`) is refused before it is sent, and one that did not navigate the tab fails.
 * Fails `CAPTURE_WRITE_REFUSED` when the expected request did not go out.
 */
export async function sendNavigation(
  page: CdpSession,
  hold: RuntimeWriteHold,
  write: NonNullable<RuntimeWrite>,
  trigger: () => Promise<void>,
  what: string,
): Promise<void> {
  if (write.target !== undefined && write.target !== "" && write.target !== "_self") {
    throw new CaptureError("CAPTURE_PAGE_UNEXPECTED", `${what} would open in another tab`);
  }
  let admitted = false;
  let navigated = false;
  try {
    hold.expect(write);
    const out = await runAndSettle(page, trigger, {
      before: () => hold.settled(SUBMIT_WAIT_MS),
    });
    navigated = out.navigated;
  } finally {
    admitted = hold.admitted;
    hold.expect(null);
  }
  if (!admitted) {
    throw new CaptureError("CAPTURE_WRITE_REFUSED", `${what} did not leave the browser`);
  }
  if (!navigated) {
    throw new CaptureError("CAPTURE_WRITE_REFUSED", `${what} did not load in the tab`);
  }
}

/**
 * Submits the page's own form by pressing Enter on its submit `button`, under the write hold
 * as {@link sendNavigation} sends any write: exactly `submission` (what the form was read to
 * submit) may leave.
 */
export function submitForm(
  page: CdpSession,
  hold: RuntimeWriteHold,
  submission: NonNullable<RuntimeWrite>,
  button: number,
  what: string,
): Promise<void> {
  return sendNavigation(page, hold, submission, () => pressEnter(page, button), what);
}

/** Presses Enter on `node` (a form's submit button): the form's own submission. */
async function pressEnter(page: CdpSession, node: number): Promise<void> {
  await page.send("DOM.focus", { backendNodeId: node });
  for (const ev of keyEvents("Enter")) await page.send("Input.dispatchKeyEvent", ev);
}
