/**
 * The seams through which the layers above shape a browser session without this layer
 * importing them: egress (proxy flags, request interception) enters as hooks built in
 * `cli/start.ts`, audit rows leave through a sink.
 *
 * @module
 */
import type { TrackedTarget } from "../../cdp/mod.ts";
import type { RefusedRequest, RefusedRequests } from "./refused_notice.ts";
import type { SessionState } from "./session_state.ts";

/** What hooks may know of their session. */
export interface SessionHandle {
  /** Session id in audit rows. */
  readonly id: string;
  /** The agent's name, once known. */
  readonly agent: string | null;
  readonly state: SessionState;
  /** Where requests refused on the page are collected for the next snapshot. */
  readonly refused: RefusedRequests;
  /** The session's request log, told which requests and tunnels were refused and why. */
  readonly network?: {
    refused(r: RefusedRequest): void;
    requestRefused(method: string, url: string, reason: string): void;
    tunnelRefused(authority: string, reason: string): void;
  };
  /**
   * Ends the session's browser because the request bodies the egress proxy held for it came
   * over the proxy's rate for too long (`SESSION_FLOODING`); nothing when none runs.
   */
  flooding?(): void;
}

/** Extra launch arguments and what to release when that browser is gone. */
export interface LaunchExtras {
  args: string[];
  /** Called once the browser it was made for has exited or failed to start. */
  release(): void;
}

/** Per-session hooks. */
export interface BrowserHooks {
  /** Runs before each browser launch (a restart after a crash included). */
  beforeLaunch?(): Promise<LaunchExtras>;
  /**
   * Takes over a browser started ahead of the session (a warm one) by binding its extras to
   * this session; false when these hooks cannot (they were made elsewhere), and the browser
   * is then not used.
   */
  adopt?(extras: LaunchExtras): boolean;
  /** Runs on every new target while it is paused, before any of its requests can leave. */
  prepareTarget?(target: TrackedTarget): Promise<void>;
  /**
   * Marks the start of a navigation the runtime runs in one of the browser's tabs. The
   * function it returns, called while that navigation's main response is late
   * (`left_behind.ts`), has the browser's requests still waiting on their upstream that were
   * judged before the mark ended (the egress proxy answers them `504 UPSTREAM_RELEASED`).
   */
  markNavigation?(): () => void;
}

/** Builds the hooks of one session. */
export type BrowserHooksFactory = (session: SessionHandle) => BrowserHooks;

/**
 * Something of the session's own that follows every target (dialogs, page log, network):
 * `watch` runs while the target is paused, so it misses none of its events.
 */
export interface TargetWatcher {
  watch(target: TrackedTarget): Promise<void> | void;
}
