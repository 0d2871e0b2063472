/**
 * This runtime's live sessions, written to its `LiveSessionStore` (the embedded store's in
 * memory, or the shared store's `PgLiveSessions`, so that every runtime's console lists
 * them): a row when a session opens, its origin, actions and taint with every beat, the
 * row's end when the session ends. This runtime's console ends its own sessions at once; a
 * kill from another runtime's console marks the session's row, and the beat reads the marks
 * and ends those sessions here, where their browsers are. The same beat runs on either
 * store.
 *
 * @module
 */
import type { BrowserSession } from "../browser/mod.ts";
import { log } from "../mod.ts";
import { processRedactor } from "../redact/mod.ts";
import type { LiveSessionStore } from "../store/mod.ts";

/** How often the rows are brought up to date (well inside the lapse after which they show as gone). */
export const LIVE_BEAT_MS = 2_000;

/** What the mirror reads of a session, and ends. */
export type MirroredSession =
  & Pick<BrowserSession, "agent" | "isolation" | "state" | "currentOrigin">
  & AsyncDisposable;

/** Options of `mirrorLiveSessions`. */
export interface LiveMirrorOptions {
  live: ReadonlyMap<string, MirroredSession>;
  store: LiveSessionStore;
  tenant: string;
  beatMs?: number;
}

/** A running mirror; disposing it stops the beat and removes this runtime's rows. */
export interface LiveMirror extends AsyncDisposable {
  /** One beat now (tests; the timer runs them otherwise). */
  beat(): Promise<void>;
}

/** Starts mirroring `live` into `store`. */
export function mirrorLiveSessions(options: LiveMirrorOptions): LiveMirror {
  const { live, store, tenant } = options;
  /** Sessions whose row exists. */
  const written = new Set<string>();
  let running: Promise<void> | undefined;
  let stopped = false;
  const once = async () => {
    for (const [id, s] of live) {
      if (written.has(id)) continue;
      await store.open(tenant, {
        id,
        agent: s.agent,
        isolation: s.isolation,
        startedAt: new Date(s.state.startedAt).toISOString(),
      });
      written.add(id);
    }
    for (const id of [...written]) {
      if (live.has(id)) continue;
      await store.end(tenant, id);
      written.delete(id);
    }
    for (const id of written) {
      const s = live.get(id);
      if (!s) continue;
      const origin = s.currentOrigin();
      await store.update(tenant, id, {
        // A host name can hold a secret a page put there: redacted before it is shared.
        origin: origin === null ? null : processRedactor().redact(origin),
        actionsUsed: s.state.counters().actionsUsed,
        tainted: s.state.tainted,
      });
    }
    await store.heartbeat();
    for (const id of await store.killed()) {
      const s = live.get(id);
      if (s) {
        log(`session ${id}: ended from a console`);
        await s[Symbol.asyncDispose]();
      } else {
        await store.end(tenant, id);
      }
    }
  };
  const beat = () => {
    // One beat at a time: a slow database does not pile them up.
    running ??= once().catch((err) => {
      log(`live sessions: ${(err as { code?: string }).code ?? "ERROR"}`);
    }).finally(() => running = undefined);
    return running;
  };
  const timer = setInterval(() => {
    if (!stopped) void beat();
  }, options.beatMs ?? LIVE_BEAT_MS);
  Deno.unrefTimer(timer);
  return {
    beat,
    async [Symbol.asyncDispose]() {
      stopped = true;
      clearInterval(timer);
      await running;
      for (const id of written) {
        await store.end(tenant, id).catch(() => {});
      }
      written.clear();
    },
  };
}
