/**
 * Reads a tab over CDP, every frame included: same-process frames through their frame ids,
 * out-of-process frames through their own target sessions. A tab is read from its
 * accessibility trees, unless its documents hold {@link FAST_MODE_MIN_NODES} nodes or
 * more: then from DOM snapshots (fast mode), since Chromium needs ~0.1 ms per node for the
 * accessibility tree, and a page of 60,000 links would hold its renderer 15 s and more.
 *
 * @module
 */
import {
  type CdpSession,
  CdpTimeoutError,
  type Protocol,
  type TargetTracker,
} from "../../cdp/mod.ts";
import { OmotaiError } from "../errors.ts";
import type { HiddenControl, OutlineFrame } from "../snapshot/outline.ts";
import { LITE_STYLES, type LiteFrame, liteFrames, liteTitle } from "../snapshot/lite_outline.ts";

/** Identity of a captured frame, used to bind refs. */
export interface CapturedFrame {
  session: CdpSession;
  frameId: string;
  loaderId: string;
  url: string;
}

/** What every capture holds. */
interface CaptureBase {
  frames: Map<string, CapturedFrame>;
  mainLoaderId: string;
  url: string;
  /** The document title. */
  title: string;
}

/** A tab read from its accessibility trees (the default). */
export interface AccessibilityCapture extends CaptureBase {
  mode: "accessibility";
  root: OutlineFrame;
}

/** A tab too large for the accessibility tree, read from DOM snapshots. */
export interface FastCapture extends CaptureBase {
  mode: "fast";
  root: LiteFrame;
  /** Nodes counted (elements and text, every frame), at least {@link FAST_MODE_MIN_NODES}. */
  nodes: number;
}

/** A captured tab. */
export type TabCapture = AccessibilityCapture | FastCapture;

/**
 * Tabs of at least this many nodes (elements and text nodes of every frame, open shadow
 * roots included) are read in fast mode. Measured on this project's 2-core test machine,
 * `Accessibility.getFullAXTree` costs 0.07–0.11 ms per node: an article page of 24,000
 * nodes takes 2.8 s, of 48,000 nodes 3.9 s; a page of 60,000 links (180,000 nodes) 15–17 s,
 * while its DOM snapshot takes 1.3–2.5 s. At this bound the accessibility path stays near
 * 2 s, inside a 5 s budget for the first page even on a busy machine, and ordinary pages
 * (a few thousand nodes) never leave it.
 */
export const FAST_MODE_MIN_NODES = 20_000;

/** How deep out-of-process frames are followed (frames in frames in frames). */
const MAX_TARGET_DEPTH = 6;

const TEXT_FIELD_ROLES = new Set(["textbox", "searchbox"]);

/** Captures `page` and all its frames: accessibility trees, or DOM snapshots when huge. */
export async function captureTab(
  page: CdpSession,
  tracker: TargetTracker,
  fastModeMinNodes = FAST_MODE_MIN_NODES,
): Promise<TabCapture> {
  const frames = new Map<string, CapturedFrame>();
  const nodes = await countNodes(page, tracker, fastModeMinNodes, 0);
  if (nodes >= fastModeMinNodes) {
    const root = await captureLiteSession(page, tracker, frames, 0);
    return {
      mode: "fast",
      root,
      nodes,
      frames,
      mainLoaderId: frames.get(root.key)?.loaderId ?? "",
      url: root.url,
      title: liteTitle(root),
    };
  }
  const root = await captureSession(page, tracker, frames, 0);
  const main = frames.get(root.key);
  const rootNode = root.nodes.find((n) => !n.parentId);
  return {
    mode: "accessibility",
    root,
    frames,
    mainLoaderId: main?.loaderId ?? "",
    url: root.url,
    title: String(rootNode?.name?.value ?? ""),
  };
}

function flatFrames(tree: Protocol.Page.FrameTree): Protocol.Page.Frame[] {
  const flat: Protocol.Page.Frame[] = [];
  const stack = [tree];
  while (stack.length > 0) {
    const t = stack.pop()!;
    flat.push(t.frame);
    // Reversed so that frames come out in the same (depth-first) order as a recursive walk.
    for (const c of [...(t.childFrames ?? [])].reverse()) stack.push(c);
  }
  return flat;
}

function childTargets(session: CdpSession, tracker: TargetTracker) {
  return tracker.targets().filter((t) =>
    t.info.type === "iframe" && t.session.parent === session && !t.session.detached
  );
}

// Counts elements and text nodes, open shadow roots included, and stops at `limit`: the
// count only decides the mode, so a page of millions of nodes costs no more than the bound.
// It runs in the runtime's isolated world, where page scripts cannot patch the DOM API.
const COUNT_NODES = `function (limit) {
  let n = 0;
  const roots = [document];
  while (roots.length > 0 && n < limit) {
    const walker = document.createTreeWalker(roots.pop(), 5);
    let node;
    while (n < limit && (node = walker.nextNode())) {
      n++;
      if (node.shadowRoot) roots.push(node.shadowRoot);
    }
  }
  return n;
}`;

/** A count takes milliseconds; a renderer that does not answer in this is busy. */
const COUNT_TIMEOUT_MS = 5_000;

/** Isolated worlds made for counting, by frame, reused while the frame's document lives. */
const countWorlds = new WeakMap<CdpSession, Map<string, { loaderId: string; contextId: number }>>();

/**
 * The nodes of a session's frames and its out-of-process frames, up to `limit`. A frame
 * that cannot be counted (navigating away) counts as empty, as it would capture empty; one
 * whose renderer does not answer within {@link COUNT_TIMEOUT_MS} counts as full.
 */
async function countNodes(
  session: CdpSession,
  tracker: TargetTracker,
  limit: number,
  depth: number,
): Promise<number> {
  const { frameTree } = await session.send("Page.getFrameTree");
  const flat = flatFrames(frameTree);
  const counts = await Promise.all(
    flat.map((f) =>
      countFrame(session, f, limit).catch((err) =>
        // A renderer too busy to count a bounded walk gets the cheaper read.
        err instanceof CdpTimeoutError ? limit : 0
      )
    ),
  );
  let total = counts.reduce((a, b) => a + b, 0);
  if (total < limit && depth < MAX_TARGET_DEPTH) {
    const children = await Promise.all(
      childTargets(session, tracker).map((t) =>
        countNodes(t.session, tracker, limit, depth + 1).catch(() => 0)
      ),
    );
    total += children.reduce((a, b) => a + b, 0);
  }
  return total;
}

async function countFrame(
  session: CdpSession,
  frame: Protocol.Page.Frame,
  limit: number,
): Promise<number> {
  let worlds = countWorlds.get(session);
  if (!worlds) countWorlds.set(session, worlds = new Map());
  // Each Page.createIsolatedWorld makes a new context: one per document is enough.
  let world = worlds.get(frame.id);
  if (!world || world.loaderId !== frame.loaderId) {
    const created = await session.send("Page.createIsolatedWorld", {
      frameId: frame.id,
      worldName: "omotai-count",
    }, { timeoutMs: COUNT_TIMEOUT_MS });
    world = { loaderId: frame.loaderId, contextId: created.executionContextId };
    worlds.set(frame.id, world);
  }
  const result = await session.send("Runtime.callFunctionOn", {
    functionDeclaration: COUNT_NODES,
    executionContextId: world.contextId,
    arguments: [{ value: limit }],
    returnByValue: true,
  }, { timeoutMs: COUNT_TIMEOUT_MS }).catch((err) => {
    // The context went with its document (a same-document reload): make a new one next time.
    worlds.delete(frame.id);
    throw err;
  });
  const n = result.result.value;
  return typeof n === "number" && Number.isFinite(n) ? n : 0;
}

/**
 * Reads a session's frames from one DOM snapshot (same-process frames are documents of
 * it) and its out-of-process frames from their own. Only layout and two computed styles
 * are asked for: no rects, paint order or colours, which would cost the renderer more.
 */
async function captureLiteSession(
  session: CdpSession,
  tracker: TargetTracker,
  frames: Map<string, CapturedFrame>,
  depth: number,
): Promise<LiteFrame> {
  const { frameTree } = await session.send("Page.getFrameTree");
  const flat = flatFrames(frameTree);
  const byId = new Map(flat.map((f) => [f.id, f]));
  const snapshot = await session.send("DOMSnapshot.captureSnapshot", {
    computedStyles: [...LITE_STYLES],
  });
  const lite = liteFrames(snapshot, (id) => byId.get(id)?.url);
  for (const f of flat) {
    if (lite.frames.has(f.id)) {
      frames.set(f.id, { session, frameId: f.id, loaderId: f.loaderId, url: f.url });
    }
  }
  const root = lite.frames.get(frameTree.frame.id);
  if (!root) {
    // The snapshot holds no document of the main frame: nothing its refs could bind to.
    throw new OmotaiError("BROWSER_ERROR", "the page changed while it was read; try again");
  }
  if (depth < MAX_TARGET_DEPTH) {
    await Promise.all(
      childTargets(session, tracker).map(async (t) => {
        const owner = await session.send("DOM.getFrameOwner", { frameId: t.info.targetId })
          .catch(() => null);
        if (!owner) return;
        const child = await captureLiteSession(t.session, tracker, frames, depth + 1)
          .catch(() => null);
        if (child) lite.childFrames.set(owner.backendNodeId, child);
      }),
    );
  }
  return root;
}

async function captureSession(
  session: CdpSession,
  tracker: TargetTracker,
  frames: Map<string, CapturedFrame>,
  depth: number,
): Promise<OutlineFrame> {
  const { frameTree } = await session.send("Page.getFrameTree");
  const flat: Protocol.Page.Frame[] = [];
  const visit = (t: Protocol.Page.FrameTree) => {
    flat.push(t.frame);
    for (const c of t.childFrames ?? []) visit(c);
  };
  visit(frameTree);

  const trees = await Promise.all(
    flat.map((f) =>
      session.send("Accessibility.getFullAXTree", { frameId: f.id })
        .then((r) => r.nodes)
        // A frame that navigated away mid-capture simply shows as empty.
        .catch(() => [] as Protocol.Accessibility.AXNode[])
    ),
  );
  const passwordFields = await findPasswordFields(session, trees.flat());
  const hidden = await Promise.all(
    flat.map((f) =>
      findHiddenControls(session, f.id).catch(() => new Map<number, HiddenControl[]>())
    ),
  );
  // Backend node ids are unique per renderer, so one owner map serves every frame here.
  const childFrames = new Map<number, OutlineFrame>();
  const outlineFrames = flat.map((f, i): OutlineFrame => {
    frames.set(f.id, { session, frameId: f.id, loaderId: f.loaderId, url: f.url });
    return {
      key: f.id,
      url: f.url,
      nodes: trees[i],
      passwordFields,
      childFrames,
      hiddenControls: hidden[i],
    };
  });

  await Promise.all(
    flat.slice(1).map(async (f, i) => {
      const owner = await session.send("DOM.getFrameOwner", { frameId: f.id }).catch(() => null);
      if (owner) childFrames.set(owner.backendNodeId, outlineFrames[i + 1]);
    }),
  );

  if (depth < 6) {
    const oopifs = tracker.targets().filter((t) =>
      t.info.type === "iframe" && t.session.parent === session && !t.session.detached
    );
    await Promise.all(oopifs.map(async (t) => {
      const owner = await session.send("DOM.getFrameOwner", { frameId: t.info.targetId })
        .catch(() => null);
      if (!owner) return;
      const child = await captureSession(t.session, tracker, frames, depth + 1).catch(() => null);
      if (child) childFrames.set(owner.backendNodeId, child);
    }));
  }
  return outlineFrames[0];
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

/** Whether a described DOM node is `<input type=password>`. */
export function isPasswordInput(node: Protocol.DOM.Node): boolean {
  if (node.nodeName.toUpperCase() !== "INPUT") return false;
  const attrs = node.attributes ?? [];
  for (let i = 0; i + 1 < attrs.length; i += 2) {
    if (attrs[i].toLowerCase() === "type") return attrs[i + 1].trim().toLowerCase() === "password";
  }
  return false;
}

// Finds visible controls under aria-hidden roots: Chromium's accessibility tree prunes them,
// yet they are on screen and clickable (a nav behind a modal, icon buttons).
const HIDDEN_CONTROLS = `function () {
  const found = [];
  const sel = "a[href], button, input:not([type=hidden]), select, textarea, [role=button], [role=link]";
  for (const root of document.querySelectorAll("[aria-hidden=true]")) {
    if (root.parentElement && root.parentElement.closest("[aria-hidden=true]")) continue;
    for (const el of root.querySelectorAll(sel)) {
      const r = el.getBoundingClientRect();
      const st = getComputedStyle(el);
      if (r.width < 1 || r.height < 1 || st.visibility !== "visible" || st.display === "none") continue;
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
    const role = el.getAttribute("role") ||
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
  frameId: string,
): Promise<Map<number, HiddenControl[]>> {
  const result = new Map<number, HiddenControl[]>();
  const world = await session.send("Page.createIsolatedWorld", { frameId, worldName: "omotai" });
  const list = await session.send("Runtime.evaluate", {
    expression: `(${HIDDEN_CONTROLS})()`,
    contextId: world.executionContextId,
  });
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
