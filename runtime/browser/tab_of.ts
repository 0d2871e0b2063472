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

/**
 * The tab of a page, an out-of-process frame or a dedicated worker: the targets whose output
 * the per-tab logs follow. Undefined for any other target, or for one below no page.
 */
export function tabTargetOf(target: TrackedTarget): string | undefined {
  const type = target.info.type;
  if (type !== "page" && type !== "iframe" && type !== "worker") return undefined;
  return tabOf(target);
}
