/**
 * Small fact builders shared by agent actions and network requests.
 *
 * @module
 */
import { type FactKind, type Facts, FACTS_ABI_VERSION } from "./facts.ts";
import { canonicalPath, normalizeOrigin } from "../net/mod.ts";

/** Session counters the facts carry. */
export interface SessionCounters {
  tainted: boolean;
  actionsUsed: number;
  secondsElapsed: number;
  confirmationsUsed: number;
}

/** The counters of a session that has done nothing yet. */
export const FRESH_SESSION: Readonly<SessionCounters> = {
  tainted: false,
  actionsUsed: 0,
  secondsElapsed: 0,
  confirmationsUsed: 0,
};

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

/**
 * The facts every action and request starts from: nothing known yet but the kind and the
 * session. Callers set only what they read; anything left out stays the strictest value.
 */
export function baseFacts(kind: FactKind, counters: SessionCounters): Facts {
  return {
    abi: FACTS_ABI_VERSION,
    kind,
    target: null,
    method: "GET",
    resource_type: kind === "request" ? "other" : "action",
    initiator: kind === "request" ? "page" : "agent",
    frame: { top: kind !== "request", origin: null },
    form: null,
    element: null,
    session: sessionFacts(counters),
  };
}
