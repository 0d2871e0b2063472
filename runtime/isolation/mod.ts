/**
 * Browser isolation: what this machine can give a session's browser (`detect.ts`), the
 * sandbox a browser is launched into (`netns.ts`) and the cgroup that bounds it (`cgroup.ts`,
 * where `cgroup_place.ts` found it can be made, or `systemd_scope.ts`, a scope systemd makes).
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
  isolationMissing,
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
export {
  BROWSER_CPU_WEIGHT,
  BROWSER_MEMORY_MB,
  BROWSER_PIDS_MAX,
  BrowserGroup,
  BrowserGroups,
  type BrowserGroupsOptions,
  type BrowserLimits,
  defaultBrowserMemoryMb,
  RUNTIME_RESERVE_BYTES,
} from "./cgroup.ts";
export {
  type CgroupFact,
  describeCgroup,
  openBrowserGroups,
  type OpenGroupsOptions,
} from "./cgroup_backend.ts";
export {
  cgroup2Mount,
  CGROUP_DIR,
  type CgroupController,
  type CgroupLocation,
  type CgroupLookup,
  type CgroupPlace,
  describePlace,
  locateCgroups,
  systemLookup,
} from "./cgroup_place.ts";
export { type CgroupFs, CgroupFsError, ENTER_SHELL, kernelFs, runShell } from "./cgroup_shell.ts";
export { killCgroup, readOomKills } from "./cgroup_oom.ts";
export {
  detectSystemd,
  SCOPE_OOM_POLICY_SINCE,
  scopeCommand,
  SYSTEMD_BOOTED,
  SYSTEMD_RUN_PATHS,
  type SystemdDetectOptions,
  type SystemdHost,
  type SystemdLocation,
  SystemdScope,
  SystemdScopes,
  type SystemdScopesOptions,
} from "./systemd_scope.ts";

// Other folders' imports (kept by tests/helpers/doors.ts: run it with --write, do not edit below).
export { TOOL_DIRS } from "./detect.ts";
