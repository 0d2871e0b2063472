/**
 * Small fact builders shared by agent actions and network requests.
 *
 * @module
 */
import type { Facts } from "./facts.ts";
import { normalizeOrigin } from "../net/origin.ts";
import { canonicalPath } from "../net/paths.ts";

/** Session counters the facts carry. */
export interface SessionCounters {
  tainted: boolean;
  actionsUsed: number;
  secondsElapsed: number;
  confirmationsUsed: number;
}

/** scheme/origin/path of a URL; null for junk. */
export function targetOf(url: string | null | undefined): Facts["target"] {
  if (!url) return null;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const scheme = u.protocol.replace(/:$/, "").toLowerCase();
  const origin = normalizeOrigin(u.href) ?? null;
  return { scheme, origin, path: origin ? canonicalPath(u.pathname) : null };
}

/** The `session` part of the facts. */
export function sessionFacts(counters: SessionCounters): Facts["session"] {
  return {
    tainted: counters.tainted,
    actions_used: counters.actionsUsed,
    seconds_elapsed: Math.round(counters.secondsElapsed * 1000) / 1000,
    confirmations_used: counters.confirmationsUsed,
  };
}
