/**
 * What both scan strategies share: the identity of a scanned frame (to bind refs), a
 * session's frames in document order, and its out-of-process frames.
 *
 * @module
 */
import type { CdpSession, Protocol, TargetTracker, TrackedTarget } from "../../cdp/mod.ts";
import { withinMs } from "./within_ms.ts";

/** Identity of a scanned frame, used to bind refs. */
export interface ScannedFrame {
  session: CdpSession;
  frameId: string;
  loaderId: string;
  url: string;
}

/** How deep out-of-process frames are followed (frames in frames in frames). */
export const MAX_TARGET_DEPTH = 6;

/**
 * Frames one scan reads at most, every renderer's together. Each frame costs its renderer
 * CDP messages (a count, a tree, two isolated-world reads, its owner), so a page that nests a
 * thousand frames held its tab's snapshot 29 s on an idle machine and over a minute on a
 * loaded one, and a hundred same-site frames still cost it seconds. Pages people use frame a
 * few, a news page with its ads a few dozen. (A renderer busy building frames keeps each
 * message waiting: the reads of a scan are asked together, see `scan_ax.ts`, so such a page's
 * snapshot waits a few times, not a few times per frame.)
 */
export const MAX_SCAN_FRAMES = 50;

/**
 * The frames left to one scan (see {@link MAX_SCAN_FRAMES}): each session takes its frames in
 * document order, the main frame first; what is past the bound is not read, and the view says
 * so (`cut`). Out-of-process frames take theirs as their sessions are reached.
 */
export class FrameBudget {
  #left: number;
  /** Whether a frame was left unread. */
  cut = false;
  /** Whether an out-of-process frame was left unread because it did not answer in time. */
  silent = false;
  /**
   * Sessions of frames that did not answer in this scan, shared by its count and its read:
   * a frame silent for the count is not waited for again.
   */
  readonly silentSessions: Set<CdpSession>;

  constructor(max = MAX_SCAN_FRAMES, silentSessions = new Set<CdpSession>()) {
    this.#left = max;
    this.silentSessions = silentSessions;
  }

  /** The first frames of `flat` the budget still allows, taken from it. */
  take<T>(flat: readonly T[]): T[] {
    const n = Math.min(this.#left, flat.length);
    this.#left -= n;
    if (n < flat.length) this.cut = true;
    return flat.slice(0, n);
  }

  /**
   * Whether another session's frames may still be read; asking past the bound is a frame
   * left unread (`cut`), so it is a method, asked once per session reached.
   */
  open(): boolean {
    if (this.#left > 0) return true;
    this.cut = true;
    return false;
  }
}

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
 * How long one out-of-process frame's read may take (its session, its own frames and theirs).
 * A frame draws on a renderer of its own, which the call watch does not probe (it probes the
 * tab's): a cross-site frame spinning its main thread held the tab's snapshot until the
 * default CDP timeout, twice (its count, then its read), while the tab itself answered in
 * milliseconds. A frame that does not answer in this is left out of the view, which says so;
 * a frame silent for the count is not waited for again by the read. About as long as the call
 * watch takes to judge a silent tab (two probes): an honest frame on a loaded machine answers
 * well within it.
 */
export const FRAME_ANSWER_MS = 8_000;

/**
 * Reads each out-of-process frame of `session` with `read` (within {@link MAX_TARGET_DEPTH}
 * and the scan's `budget`) and hands it to `place` with the backend id of its owner
 * `<iframe>`. A frame whose owner or content cannot be read (it navigated away mid-scan) is
 * left out.
 */
export async function readChildTargets<F>(
  session: CdpSession,
  tracker: TargetTracker,
  depth: number,
  budget: FrameBudget,
  read: (child: CdpSession, depth: number) => Promise<F>,
  place: (ownerBackendNodeId: number, frame: F) => void,
): Promise<void> {
  if (depth >= MAX_TARGET_DEPTH) return;
  await Promise.all(
    childTargets(session, tracker).map(async (t) => {
      if (!budget.open()) return;
      const owner = await session.send("DOM.getFrameOwner", { frameId: t.info.targetId })
        .catch(() => null);
      if (!owner) return;
      const child = budget.silentSessions.has(t.session)
        ? undefined
        : await withinMs(read(t.session, depth + 1), FRAME_ANSWER_MS).catch(() => null);
      if (child === undefined) {
        budget.silent = true;
        budget.silentSessions.add(t.session);
      }
      if (child) place(owner.backendNodeId, child);
    }),
  );
}
