/**
 * Scans a huge tab from DOM snapshots, the strategy `scan.ts` picks past
 * `DOM_SNAPSHOT_MIN_NODES` nodes: one `DOMSnapshot.captureSnapshot` per renderer
 * (same-process frames are documents of it), out-of-process frames from their own.
 *
 * @module
 */
import type { CdpSession, TargetTracker } from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";
import { type DomFrame, domFrames, VISIBILITY_STYLES } from "../snapshot/mod.ts";
import {
  flatFrames,
  type FrameBudget,
  readChildTargets,
  type ScannedFrame,
} from "./scan_frames.ts";

/**
 * Reads a session's frames from one DOM snapshot (same-process frames are documents of
 * it) and its out-of-process frames from their own. Only layout and the computed styles
 * the visibility rule reads are asked for: no rects, paint order or colours, which would
 * cost the renderer more. A renderer's frames come in its one snapshot, so `budget` bounds
 * how many are kept (in document order) and how many out-of-process frames are read.
 */
export async function scanDomSession(
  session: CdpSession,
  tracker: TargetTracker,
  frames: Map<string, ScannedFrame>,
  depth: number,
  budget: FrameBudget,
): Promise<DomFrame> {
  const { frameTree } = await session.send("Page.getFrameTree");
  const flat = budget.take(flatFrames(frameTree));
  if (flat.length === 0) throw new OmotaiError("BROWSER_ERROR", "no frame left to read");
  const byId = new Map(flat.map((f) => [f.id, f]));
  const snapshot = await session.send("DOMSnapshot.captureSnapshot", {
    computedStyles: [...VISIBILITY_STYLES],
  });
  const read = domFrames(snapshot, (id) => byId.get(id)?.url);
  for (const f of flat) {
    if (read.frames.has(f.id)) {
      frames.set(f.id, { session, frameId: f.id, loaderId: f.loaderId, url: f.url });
    }
  }
  const root = read.frames.get(frameTree.frame.id);
  if (!root) {
    // The snapshot holds no document of the main frame: nothing its refs could bind to.
    throw new OmotaiError("BROWSER_ERROR", "the page changed while it was read; try again");
  }
  await readChildTargets(
    session,
    tracker,
    depth,
    budget,
    (child, childDepth) => scanDomSession(child, tracker, frames, childDepth, budget),
    (owner, child) => read.childFrames.set(owner, child),
  );
  return root;
}
