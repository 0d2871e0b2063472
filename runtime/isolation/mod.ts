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
  findNice,
  IsolationError,
  type IsolationErrorCode,
  type IsolationFact,
  type IsolationKind,
  type IsolationTools,
  NICE_PATHS,
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
