/**
 * Reads a tab's accessibility trees over CDP, every frame included: same-process frames
 * through their frame ids, out-of-process frames through their own target sessions.
 *
 * @module
 */
import type { CdpSession, Protocol, TargetTracker } from "../../cdp/mod.ts";
import type { OutlineFrame } from "../snapshot/outline.ts";

/** Identity of a captured frame, used to bind refs. */
export interface CapturedFrame {
  session: CdpSession;
  frameId: string;
  loaderId: string;
  url: string;
}

/** A captured tab. */
export interface TabCapture {
  root: OutlineFrame;
  frames: Map<string, CapturedFrame>;
  mainLoaderId: string;
  url: string;
  /** The document title, as the accessibility root names it. */
  title: string;
}

const TEXT_FIELD_ROLES = new Set(["textbox", "searchbox"]);

/** Captures the accessibility tree of `page` and all its frames. */
export async function captureTab(
  page: CdpSession,
  tracker: TargetTracker,
): Promise<TabCapture> {
  const frames = new Map<string, CapturedFrame>();
  const root = await captureSession(page, tracker, frames, 0);
  const main = frames.get(root.key);
  const rootNode = root.nodes.find((n) => !n.parentId);
  return {
    root,
    frames,
    mainLoaderId: main?.loaderId ?? "",
    url: root.url,
    title: String(rootNode?.name?.value ?? ""),
  };
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
  // Backend node ids are unique per renderer, so one owner map serves every frame here.
  const childFrames = new Map<number, OutlineFrame>();
  const outlineFrames = flat.map((f, i): OutlineFrame => {
    frames.set(f.id, { session, frameId: f.id, loaderId: f.loaderId, url: f.url });
    return { key: f.id, url: f.url, nodes: trees[i], passwordFields, childFrames };
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
