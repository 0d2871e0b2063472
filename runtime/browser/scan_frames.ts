/**
 * What both scan strategies share: the identity of a scanned frame (to bind refs), a
 * session's frames in document order, and its out-of-process frames.
 *
 * @module
 */
import type { CdpSession, Protocol, TargetTracker, TrackedTarget } from "../../cdp/mod.ts";

/** Identity of a scanned frame, used to bind refs. */
export interface ScannedFrame {
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

/**
 * Reads each out-of-process frame of `session` with `read` (within {@link MAX_TARGET_DEPTH})
 * and hands it to `place` with the backend id of its owner `<iframe>`. A frame whose owner
 * or content cannot be read (it navigated away mid-scan) is left out.
 */
export async function readChildTargets<F>(
  session: CdpSession,
  tracker: TargetTracker,
  depth: number,
  read: (child: CdpSession, depth: number) => Promise<F>,
  place: (ownerBackendNodeId: number, frame: F) => void,
): Promise<void> {
  if (depth >= MAX_TARGET_DEPTH) return;
  await Promise.all(
    childTargets(session, tracker).map(async (t) => {
      const owner = await session.send("DOM.getFrameOwner", { frameId: t.info.targetId })
        .catch(() => null);
      if (!owner) return;
      const child = await read(t.session, depth + 1).catch(() => null);
      if (child) place(owner.backendNodeId, child);
    }),
  );
}
