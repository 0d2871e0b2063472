/**
 * Omotai's CDP layer: a typed client over Chromium's `--remote-debugging-pipe`, a hardened
 * process starter with private profiles, and a tracker that attaches to every target. Imports
 * nothing from `runtime/` or `ui/`.
 *
 * @module
 */
export * from "./errors.ts";
export * from "./types.ts";
export { CdpSession } from "./session.ts";
export {
  CdpConnection,
  type CdpLog,
  type ConnectionOptions,
  DEFAULT_TIMEOUT_MS,
  describeError,
  type MessageTransport,
} from "./connection.ts";
export {
  CDP_BYTE_RATE,
  MAX_MESSAGE_BYTES,
  PipeTransport,
  type PipeTransportOptions,
} from "./pipe_transport.ts";
export { ByteRate, type ByteRateLimits, type Pace } from "../shared/mod.ts";
export {
  BROWSER_CANDIDATES,
  BrowserProcess,
  DISABLED_FEATURES,
  ENABLED_FEATURES,
  findBrowser,
  type FindBrowserOptions,
  HARDENED_ARGS,
  HEADLESS_SHELL_CANDIDATES,
  isHeadlessShell,
  launchBrowser,
  type LaunchOptions,
  runningAsRoot,
} from "./chromium_process.ts";
export { type OpenedTab, openTab } from "./open_tab.ts";
export { ProfileStore, sweepStaleProfiles } from "./profile.ts";
export {
  type AdmitHook,
  type AttachHook,
  type TargetEvent,
  TargetTracker,
  type TrackedTarget,
  type TrackerOptions,
} from "./target_tracker.ts";
