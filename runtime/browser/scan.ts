/**
 * Reads a tab over CDP, every frame included: same-process frames through their frame ids,
 * out-of-process frames through their own target sessions. Two strategies, one file each: a
 * tab is read from its accessibility trees (`scan_ax.ts`), unless its documents hold
 * {@link DOM_SNAPSHOT_MIN_NODES} nodes or more: then from DOM snapshots (`scan_dom.ts`),
 * since Chromium needs ~0.1 ms per node for the accessibility tree, and a page of 60,000
 * links would hold its renderer 15 s and more. A tab of {@link MAX_SCAN_TEXT_CHARS}
 * characters of text or more is not read (`PAGE_TOO_LARGE`), and of a tab's frames only the
 * first `MAX_SCAN_FRAMES` are (`scan_frames.ts`). This file counts and picks.
 *
 * @module
 */
import {
  type CdpSession,
  CdpTimeoutError,
  type Protocol,
  type TargetTracker,
} from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";
import { type AxFrame, type DomFrame, domTitle } from "../snapshot/mod.ts";
import { inFrameWorld } from "./frame_world.ts";
import { scanAxSession } from "./scan_ax.ts";
import { scanDomSession } from "./scan_dom.ts";
import {
  childTargets,
  flatFrames,
  FRAME_ANSWER_MS,
  FrameBudget,
  MAX_SCAN_FRAMES,
  MAX_TARGET_DEPTH,
  type ScannedFrame,
} from "./scan_frames.ts";
import { withinMs } from "./within_ms.ts";

/** What every scan holds. */
interface ScanBase {
  frames: Map<string, ScannedFrame>;
  mainLoaderId: string;
  url: string;
  /** The document title. */
  title: string;
  /** Whether frames past `MAX_SCAN_FRAMES` were left unread. */
  framesCut: boolean;
  /** Whether an out-of-process frame was left unread: it did not answer (`FRAME_ANSWER_MS`). */
  framesSilent: boolean;
}

/** A tab read from its accessibility trees (the default). */
export interface AccessibilityScan extends ScanBase {
  mode: "accessibility";
  root: AxFrame;
}

/** A tab too large for the accessibility tree, read from DOM snapshots. */
export interface DomSnapshotScan extends ScanBase {
  mode: "dom-snapshot";
  root: DomFrame;
  /** Nodes counted (elements and text, every frame), at least {@link DOM_SNAPSHOT_MIN_NODES}. */
  nodes: number;
}

/** A scanned tab. */
export type TabScan = AccessibilityScan | DomSnapshotScan;

/**
 * Tabs of at least this many nodes (elements and text nodes of every frame, open shadow
 * roots included) are read from DOM snapshots. Measured on this project's 2-core test
 * machine, `Accessibility.getFullAXTree` costs 0.07–0.11 ms per node: an article page of
 * 24,000 nodes takes 2.8 s, of 48,000 nodes 3.9 s; a page of 60,000 links (180,000 nodes)
 * 15–17 s, while its DOM snapshot takes 1.3–2.5 s. At this bound the accessibility path
 * stays near 2 s, inside a 5 s budget for the first page even on a busy machine, and
 * ordinary pages (a few thousand nodes) never leave it.
 */
export const DOM_SNAPSHOT_MIN_NODES = 20_000;

/**
 * Characters of text (every text node of every frame) past which a tab is not read at all:
 * its accessibility tree or DOM snapshot would come as one CDP message over the 32 MiB cap
 * (text can be three bytes a character, and a tree holds it more than once), and a message
 * over the cap ends the browser. The call fails with `PAGE_TOO_LARGE` instead, and reading
 * mode, bounded in the page, still reads the text's start.
 */
export const MAX_SCAN_TEXT_CHARS = 4_000_000;

/** The tab's size as counted before a scan. */
interface TabSize {
  /** Nodes, up to the count's limit. */
  nodes: number;
  /** Characters of text, up to {@link MAX_SCAN_TEXT_CHARS}. */
  chars: number;
}

/**
 * Scans `page` and its frames (the first `maxFrames`): accessibility trees, or DOM snapshots
 * when huge.
 */
export async function scanTab(
  page: CdpSession,
  tracker: TargetTracker,
  domSnapshotMinNodes = DOM_SNAPSHOT_MIN_NODES,
  maxFrames = MAX_SCAN_FRAMES,
): Promise<TabScan> {
  const frames = new Map<string, ScannedFrame>();
  // Frames that did not answer the count are not waited for again by the read.
  const silent = new Set<CdpSession>();
  // The count reads the frames the scan will read: those the same bound leaves.
  const { nodes, chars } = await countNodes(
    page,
    tracker,
    domSnapshotMinNodes,
    0,
    new FrameBudget(maxFrames, silent),
  );
  if (chars >= MAX_SCAN_TEXT_CHARS) {
    throw new OmotaiError(
      "PAGE_TOO_LARGE",
      `the page holds over ${
        MAX_SCAN_TEXT_CHARS.toLocaleString("en-US")
      } characters of text, more than a snapshot reads; browser_snapshot {"mode": "read"} reads its start`,
    );
  }
  const budget = new FrameBudget(maxFrames, silent);
  if (nodes >= domSnapshotMinNodes) {
    const root = await scanDomSession(page, tracker, frames, 0, budget);
    return {
      mode: "dom-snapshot",
      root,
      nodes,
      frames,
      framesCut: budget.cut,
      framesSilent: budget.silent,
      mainLoaderId: frames.get(root.key)?.loaderId ?? "",
      url: root.url,
      title: domTitle(root),
    };
  }
  const root = await scanAxSession(page, tracker, frames, 0, budget);
  const main = frames.get(root.key);
  const rootNode = root.nodes.find((n) => !n.parentId);
  return {
    mode: "accessibility",
    root,
    frames,
    framesCut: budget.cut,
    framesSilent: budget.silent,
    mainLoaderId: main?.loaderId ?? "",
    url: root.url,
    title: String(rootNode?.name?.value ?? ""),
  };
}

// Counts elements and text nodes, open shadow roots included, up to `limit`, and the
// characters of text up to `charLimit`; it stops when both are reached (or at `walkLimit`
// nodes), so a page of millions of nodes costs no more than the bounds. It runs in the
// runtime's isolated world, where page scripts cannot patch the DOM API.
const COUNT_NODES = `function (limit, charLimit, walkLimit) {
  // A script's or a style's source is no text of the page (a bundle can be megabytes).
  const CODE = new Set(["script", "style", "noscript", "template"]);
  let n = 0;
  let chars = 0;
  let walked = 0;
  const roots = [document];
  const more = () => (n < limit || chars < charLimit) && walked < walkLimit;
  while (roots.length > 0 && more()) {
    const walker = document.createTreeWalker(roots.pop(), 5);
    let node;
    while (more() && (node = walker.nextNode())) {
      walked++;
      if (n < limit) n++;
      if (node.nodeType === 3 && !CODE.has(node.parentNode?.localName)) chars += node.length;
      if (node.shadowRoot) roots.push(node.shadowRoot);
    }
  }
  return [n, Math.min(chars, charLimit)];
}`;

/** Nodes a count walks at most: past it the tab counts as full, its text as counted. */
const COUNT_WALK_MAX = 2_000_000;

/** A count takes milliseconds; a renderer that does not answer in this is busy. */
const COUNT_TIMEOUT_MS = 5_000;

/**
 * The nodes of a session's frames and its out-of-process frames, up to `limit`, of the
 * frames `budget` leaves. A frame that cannot be counted (navigating away) counts as empty, as
 * it would scan empty; one whose renderer does not answer within {@link COUNT_TIMEOUT_MS}
 * counts as full.
 */
async function countNodes(
  session: CdpSession,
  tracker: TargetTracker,
  limit: number,
  depth: number,
  budget: FrameBudget,
): Promise<TabSize> {
  const { frameTree } = await session.send("Page.getFrameTree");
  const flat = budget.take(flatFrames(frameTree));
  const counts = await Promise.all(
    flat.map((f) =>
      countFrame(session, f, limit).catch((err): TabSize =>
        // A renderer too busy to count a bounded walk gets the cheaper read.
        err instanceof CdpTimeoutError ? { nodes: limit, chars: 0 } : { nodes: 0, chars: 0 }
      )
    ),
  );
  const total = counts.reduce(
    (a, b) => ({ nodes: a.nodes + b.nodes, chars: a.chars + b.chars }),
    { nodes: 0, chars: 0 },
  );
  if ((total.nodes < limit || total.chars < MAX_SCAN_TEXT_CHARS) && depth < MAX_TARGET_DEPTH) {
    const children = await Promise.all(
      childTargets(session, tracker).map((t) =>
        budget.open()
          // A frame that does not answer counts as empty: its read will leave it out too.
          ? withinMs(countNodes(t.session, tracker, limit, depth + 1, budget), FRAME_ANSWER_MS)
            .then((c) => {
              if (c) return c;
              budget.silentSessions.add(t.session);
              return { nodes: 0, chars: 0 };
            }, () => ({ nodes: 0, chars: 0 }))
          : { nodes: 0, chars: 0 }
      ),
    );
    for (const c of children) {
      total.nodes += c.nodes;
      total.chars += c.chars;
    }
  }
  return total;
}

async function countFrame(
  session: CdpSession,
  frame: Protocol.Page.Frame,
  limit: number,
): Promise<TabSize> {
  const result = await inFrameWorld(
    session,
    frame,
    (contextId) =>
      session.send("Runtime.callFunctionOn", {
        functionDeclaration: COUNT_NODES,
        executionContextId: contextId,
        arguments: [{ value: limit }, { value: MAX_SCAN_TEXT_CHARS }, { value: COUNT_WALK_MAX }],
        returnByValue: true,
      }, { timeoutMs: COUNT_TIMEOUT_MS }),
    COUNT_TIMEOUT_MS,
  );
  const v: unknown = result.result.value;
  const count = (x: unknown) => typeof x === "number" && Number.isFinite(x) && x > 0 ? x : 0;
  return Array.isArray(v) ? { nodes: count(v[0]), chars: count(v[1]) } : { nodes: 0, chars: 0 };
}
