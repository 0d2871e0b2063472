/**
 * Browser isolation: what this machine can give a session's browser (`detect.ts`) and the
 * sandbox a browser is launched into (`netns.ts`).
 *
 * @module
 */
export {
  BROWSER_USER,
  type BrowserUser,
  describeIsolation,
  DETECT_READS,
  detectIsolation,
  type DetectOptions,
  IsolationError,
  type IsolationErrorCode,
  type IsolationFact,
  type IsolationKind,
  type IsolationTools,
  withoutNamespace,
} from "./detect.ts";
export {
  EGRESS_INSIDE,
  hiddenRoot,
  type LaunchWrap,
  NetnsIsolation,
  type NetnsOptions,
  proxyPortOf,
  SANDBOX_DIR,
  sandboxCommand,
  type SandboxSpec,
} from "./netns.ts";
