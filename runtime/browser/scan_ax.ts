/**
 * Scans a tab from its accessibility trees, the default strategy of `scan.ts`: one
 * tree per frame, the password fields among its text boxes (their values are never shown),
 * and the visible controls under `aria-hidden` roots the tree prunes.
 *
 * @module
 */
import type { CdpSession, Protocol, TargetTracker } from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";
import {
  ARIA_CONTROL_ROLES,
  type AxFrame,
  type HiddenControl,
  IN_PAGE_CONTROL_SHOWN,
  IN_PAGE_HIDDEN_OPTIONS,
} from "../snapshot/mod.ts";
import {
  flatFrames,
  type FrameBudget,
  readChildTargets,
  type ScannedFrame,
} from "./scan_frames.ts";
import { inFrameWorld, type WorldFrame } from "./frame_world.ts";

const TEXT_FIELD_ROLES = new Set(["textbox", "searchbox"]);

/**
 * Reads a session's frames and, within the depth bound, its out-of-process frames, as many
 * as `budget` leaves (the session's main frame first: a session is only read while frames are
 * left).
 */
export async function scanAxSession(
  session: CdpSession,
  tracker: TargetTracker,
  frames: Map<string, ScannedFrame>,
  depth: number,
  budget: FrameBudget,
): Promise<AxFrame> {
  const { frameTree } = await session.send("Page.getFrameTree");
  const flat = budget.take(flatFrames(frameTree));
  if (flat.length === 0) throw new OmotaiError("BROWSER_ERROR", "no frame left to read");

  // Every read below goes to the same renderer, and a busy one (a page building frames, or
  // spinning workers) keeps each round trip waiting: the independent reads are asked
  // together, so the scan costs it a few waits, not one per kind of read.
  const childFrames = new Map<number, AxFrame>();
  const frameOwners = new Map<string, number>();
  const [axTrees, hidden, hiddenOptions] = await Promise.all([
    Promise.all(flat.map((f) =>
      session.send("Accessibility.getFullAXTree", { frameId: f.id })
        .then((r) => r.nodes)
        // A frame that navigated away mid-scan simply shows as empty.
        .catch(() => [] as Protocol.Accessibility.AXNode[])
    )),
    Promise.all(
      flat.map((f) =>
        findHiddenControls(session, f).catch(() => new Map<number, HiddenControl[]>())
      ),
    ),
    Promise.all(flat.map((f) => findHiddenOptions(session, f).catch(() => new Set<number>()))),
    Promise.all(
      flat.slice(1).map(async (f) => {
        const owner = await session.send("DOM.getFrameOwner", { frameId: f.id }).catch(() => null);
        if (owner) frameOwners.set(f.id, owner.backendNodeId);
      }),
    ),
  ]);
  const passwordFields = await findPasswordFields(session, axTrees.flat());
  // Backend node ids are unique per renderer, so one owner map serves every frame here.
  const axFrames = flat.map((f, i): AxFrame => {
    frames.set(f.id, { session, frameId: f.id, loaderId: f.loaderId, url: f.url });
    return {
      key: f.id,
      url: f.url,
      nodes: axTrees[i],
      passwordFields,
      childFrames,
      hiddenControls: hidden[i],
      hiddenOptions: hiddenOptions[i],
    };
  });
  for (const [i, f] of flat.entries()) {
    const owner = frameOwners.get(f.id);
    if (owner !== undefined) childFrames.set(owner, axFrames[i]);
  }
  // Out-of-process frames after this renderer's own: a frame's target attached as the page
  // loaded is read then (asked at once, a first view after a navigation missed it).
  await readChildTargets(
    session,
    tracker,
    depth,
    budget,
    (child, childDepth) => scanAxSession(child, tracker, frames, childDepth, budget),
    (owner, child) => childFrames.set(owner, child),
  );
  return axFrames[0];
}

async function findPasswordFields(
  session: CdpSession,
  nodes: Protocol.Accessibility.AXNode[],
): Promise<Set<number>> {
  const ids = new Set<number>();
  for (const n of nodes) {
    if (n.backendDOMNodeId !== undefined && TEXT_FIELD_ROLES.has(String(n.role?.value))) {
      ids.add(n.backendDOMNodeId);
    }
  }
  const result = new Set<number>();
  await Promise.all([...ids].map(async (id) => {
    const described = await session.send("DOM.describeNode", { backendNodeId: id })
      .catch(() => null);
    // Unknown means we cannot prove it is not a password: treat it as one.
    if (!described || isPasswordInput(described.node)) result.add(id);
  }));
  return result;
}

/** Whether a described DOM node is `<input type=password>` (the DOM-snapshot walk asks the same). */
function isPasswordInput(node: Protocol.DOM.Node): boolean {
  if (node.nodeName.toUpperCase() !== "INPUT") return false;
  const attrs = node.attributes ?? [];
  for (let i = 0; i + 1 < attrs.length; i += 2) {
    if (attrs[i].toLowerCase() === "type") return attrs[i + 1].trim().toLowerCase() === "password";
  }
  return false;
}

// Finds visible controls under aria-hidden roots: Chromium's accessibility tree prunes them,
// yet they are on screen and clickable (a nav behind a modal, icon buttons). Listed are
// those the visibility rule shows, with a box of at least 1×1 px to click.
const HIDDEN_CONTROLS = `function () {
  const shown = ${IN_PAGE_CONTROL_SHOWN};
  const found = [];
  const sel = "a[href], button, input:not([type=hidden]), select, textarea, [role=button], [role=link]";
  for (const root of document.querySelectorAll("[aria-hidden=true]")) {
    if (root.parentElement && root.parentElement.closest("[aria-hidden=true]")) continue;
    for (const el of root.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      if (r.width < 1 || r.height < 1 || !shown(el)) continue;
      found.push([el, root]);
      if (found.length >= 500) return found;
    }
  }
  return found;
}`;

const HIDDEN_META = `function () {
  return this.map(([el]) => {
    const tag = el.tagName.toLowerCase();
    const type = (el.getAttribute("type") || "").toLowerCase();
    // The page's role attribute only when it is one word the outline knows (its first
    // token, as the accessibility tree reads it); otherwise the element's own role.
    const given = (el.getAttribute("role") || "").trim().toLowerCase().split(/\\s+/)[0];
    const role = (${JSON.stringify(ARIA_CONTROL_ROLES)}.includes(given) ? given : "") ||
      (tag === "a" ? "link" : tag === "select" ? "combobox" : tag === "textarea" ? "textbox" :
      tag === "input" ? (["submit", "button", "reset", "image"].includes(type) ? "button" :
        ["checkbox", "radio"].includes(type) ? type : type === "password" ? "password" : "textbox") :
      "button");
    const name = (el.getAttribute("aria-label") || el.innerText || el.getAttribute("title") ||
      el.getAttribute("alt") || (type === "submit" || type === "button" ? el.value : "") || "").trim();
    return { role, name: name.replace(/\\s+/g, " ").slice(0, 1000), url: tag === "a" ? el.href : null };
  });
}`;

async function findHiddenControls(
  session: CdpSession,
  frame: WorldFrame,
): Promise<Map<number, HiddenControl[]>> {
  const result = new Map<number, HiddenControl[]>();
  // None found is null, no array to ask about: the usual page costs one round trip.
  const list = await inFrameWorld(session, frame, (contextId) =>
    session.send("Runtime.evaluate", {
      expression: `(() => { const f = (${HIDDEN_CONTROLS})(); return f.length ? f : null; })()`,
      contextId,
    }));
  const arrayId = list.result.objectId;
  if (!arrayId || list.exceptionDetails) return result;
  try {
    const meta = await session.send("Runtime.callFunctionOn", {
      objectId: arrayId,
      functionDeclaration: HIDDEN_META,
      returnByValue: true,
    });
    const infos = (meta.result.value ?? []) as { role: string; name: string; url: string | null }[];
    if (infos.length === 0) return result;
    const pairs = await session.send("Runtime.getProperties", {
      objectId: arrayId,
      ownProperties: true,
    });
    for (const prop of pairs.result) {
      const index = Number(prop.name);
      if (!Number.isInteger(index) || !prop.value?.objectId) continue;
      const parts = await session.send("Runtime.getProperties", {
        objectId: prop.value.objectId,
        ownProperties: true,
      });
      const el = parts.result.find((p) => p.name === "0")?.value?.objectId;
      const root = parts.result.find((p) => p.name === "1")?.value?.objectId;
      if (!el || !root) continue;
      const [e, r] = await Promise.all([
        session.send("DOM.describeNode", { objectId: el }),
        session.send("DOM.describeNode", { objectId: root }),
      ]);
      const info = infos[index];
      if (!info) continue;
      const entry: HiddenControl = { backendNodeId: e.node.backendNodeId, ...info };
      const bucket = result.get(r.node.backendNodeId) ?? [];
      bucket.push(entry);
      result.set(r.node.backendNodeId, bucket);
    }
  } finally {
    await session.send("Runtime.releaseObject", { objectId: arrayId }).catch(() => {});
  }
  return result;
}

/** Backend ids of the frame's select options the visibility rule hides (isolated world). */
async function findHiddenOptions(session: CdpSession, frame: WorldFrame): Promise<Set<number>> {
  const result = new Set<number>();
  const list = await inFrameWorld(session, frame, (contextId) =>
    session.send("Runtime.evaluate", {
      expression:
        `(() => { const f = (${IN_PAGE_HIDDEN_OPTIONS})(document); return f.length ? f : null; })()`,
      contextId,
    }));
  const arrayId = list.result.objectId;
  if (!arrayId || list.exceptionDetails) return result;
  try {
    const props = await session.send("Runtime.getProperties", {
      objectId: arrayId,
      ownProperties: true,
    });
    await Promise.all(props.result.map(async (p) => {
      if (!/^\d+$/.test(p.name) || !p.value?.objectId) return;
      const d = await session.send("DOM.describeNode", { objectId: p.value.objectId });
      result.add(d.node.backendNodeId);
    }));
  } finally {
    await session.send("Runtime.releaseObject", { objectId: arrayId }).catch(() => {});
  }
  return result;
}
