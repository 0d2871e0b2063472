/**
 * Which tab a target belongs to.
 *
 * @module
 */
import type { CdpSession, TrackedTarget } from "../../cdp/mod.ts";

/**
 * The target id of the tab `target` belongs to: its own for a page, its page's for an
 * out-of-process frame or a worker attached below one; undefined for anything else.
 */
export function tabOf(target: TrackedTarget): string | undefined {
  let s: CdpSession | undefined = target.session;
  while (s && s.targetInfo?.type !== "page") s = s.parent;
  return s?.targetInfo?.targetId;
}
