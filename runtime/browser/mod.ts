/**
 * The door of runtime/browser/ (one session's Chromium: tabs, snapshots, refs, element ops, state):
 * other folders import from this file only.
 *
 * @module
 */

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { launchAdmission, loadAdmission } from "./admission.ts";
export type { Admission } from "./admission.ts";
export type { RefusedRequest } from "./refused_notice.ts";
export { BrowserSession } from "./browser_session.ts";
export type { CallWatchBounds, Interruption } from "./call_watch.ts";
export { PAGE_LOG_LEVELS } from "./page_log.ts";
export type { OpenDialog } from "./dialogs.ts";
export { readElementInfo, readFocusedField, readFocusedInfo } from "./element_info.ts";
export type { ElementInfo } from "./element_info.ts";
export { callOnElement, clickElement, pressKey, selectOptions, typeInto } from "./element_ops.ts";
export type { Element, TypedField, ViewportBox } from "./element_ops.ts";
export type { OpenChooser } from "./file_choosers.ts";
export type { BrowserHooksFactory, LaunchExtras, SessionHandle } from "./hooks.ts";
export { keyEvents } from "./keys.ts";
export { startBrowser } from "./launch.ts";
export type { BrowserStart, LaunchIsolation, WarmSource } from "./launch.ts";
export type { LaunchGroups } from "./launch_group.ts";
export {
  goBack,
  LOAD_TIMEOUT_MS,
  mainFrameId,
  navigate,
  nextFrame,
  runAndSettle,
} from "./navigation.ts";
export type { LoadOutcome } from "./navigation.ts";
export {
  dragElement,
  hoverElement,
  isRangeInput,
  setRangeValue,
  visibleBox,
} from "./pointer_ops.ts";
export { authorityOf } from "./proxy_refusals.ts";
export type { TabInfo } from "./tabs.ts";
export { defaultPoolSize, WarmPool } from "./warm_pool.ts";
