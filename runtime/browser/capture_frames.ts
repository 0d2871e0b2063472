/**
 * What both capture strategies share: the identity of a captured frame (to bind refs), a
 * session's frames in document order, and its out-of-process frames.
 *
 * @module
 */
import type { CdpSession, Protocol, TargetTracker, TrackedTarget } from "../../cdp/mod.ts";

/** Identity of a captured frame, used to bind refs. */
export interface CapturedFrame {
  session: CdpSession;
  frameId: string;
  loaderId: string;
  url: string;
}

/** How deep out-of-process frames are followed (frames in frames in frames). */
export const MAX_TARGET_DEPTH = 6;

/** A session's frames, depth first in document order, without recursion. */
export function flatFrames(tree: Protocol.Page.FrameTree): Protocol.Page.Frame[] {
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

/** The out-of-process frames a session's document holds directly. */
export function childTargets(session: CdpSession, tracker: TargetTracker): TrackedTarget[] {
  return tracker.targets().filter((t) =>
    t.info.type === "iframe" && t.session.parent === session && !t.session.detached
  );
}
