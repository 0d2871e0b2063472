/**
 * The browsers' isolation for one start: what this machine can give them (detected once,
 * logged in one line), the private directory of the proxy's sockets, once the proxy runs the
 * sandbox every launch of every session goes through, and once the runtime's policy is read
 * the cgroup that bounds each browser. Without a namespace (`none`) the proxy listens on
 * loopback ports and browsers start without one; without cgroups they are not bounded.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import type { LaunchGroups, LaunchIsolation } from "../browser/mod.ts";
import { type EgressProxy, MAX_SOCKET_PATH, socketPathFor } from "../egress/mod.ts";
import type { AuditSink } from "../store/mod.ts";
import {
  BROWSER_CPU_WEIGHT,
  BROWSER_PIDS_MAX,
  defaultBrowserMemoryMb,
  describeIsolation,
  detectIsolation,
  IsolationError,
  type IsolationFact,
  isolationMissing,
  NetnsIsolation,
  openBrowserGroups,
  withoutNamespace,
} from "../isolation/mod.ts";
import type { PolicyFile } from "../policy/mod.ts";
import { log } from "../mod.ts";
import type { Teardown } from "./teardown.ts";

/** How browsers are isolated (`StartOptions.isolation`). */
export interface IsolationOptions {
  /** `off`: browsers start as before, without a namespace. Default `auto`: a namespace if any. */
  mode?: "auto" | "off";
  /** The browser's own user when the runtime is root (name or uid); default `omotai-browser`. */
  browserUser?: string;
  /** Tests: the browser's flags as launched (a browser that ignores its proxy). */
  testArgs?(args: string[]): string[];
}

/** The isolation of one start. */
export interface BrowserIsolation {
  fact: IsolationFact;
  /** What the egress proxy starts with: its socket directory and the sockets' owner. */
  proxy: { socketDir?: string; socketOwner?: { uid: number; gid: number } };
  /** The launches' sandbox over the running proxy (none without a namespace). */
  launcher(proxy: EgressProxy): LaunchIsolation | undefined;
  /**
   * Makes this start's browser cgroups, sized by the runtime's policy and the session cap,
   * registered on the teardown, and logs the one line `browser isolation: ...`: the fact
   * with its cgroup, and the groups (none where this machine cannot give them).
   */
  bound(sizing: GroupSizing): Promise<{ fact: IsolationFact; groups?: LaunchGroups }>;
}

/** What sizes each browser's memory limit. */
export interface GroupSizing {
  /** The runtime's policy's `limits.browser_memory_mb`, if set. */
  memoryMb?: number;
  /** The sessions this runtime holds at once (the default limit shares the memory). */
  maxSessions: number;
}

/**
 * Detects the isolation and makes the sockets' directory, 0700:
 * `<dataDir>/egress/<instance>`, named after the profile store's instance directory
 * (`instanceDir`), registered on the teardown. A crashed runtime's is removed by the next
 * start once the profile store has swept its instance. `dataDir` is hidden from every browser.
 */
export async function openIsolation(
  options: IsolationOptions | undefined,
  dirs: { dataDir: string; instanceDir: string; headful?: boolean },
  teardown: Teardown,
): Promise<BrowserIsolation> {
  let fact = await detectIsolation({ mode: options?.mode, browserUser: options?.browserUser });
  if (dirs.headful && fact.kind === "netns") {
    // A window needs the display's socket, which the sandbox hides (debugging only).
    fact = withoutNamespace(fact, "--headful: the browser needs the display");
  }
  // Absolute: the sandbox's mounts and the proxy's permission must not depend on a cwd.
  const dataDir = await Deno.realPath(dirs.dataDir);
  const socketRoot = join(dataDir, "egress");
  const socketDir = join(socketRoot, basename(dirs.instanceDir));
  if (fact.kind === "netns" && socketPathFor(socketDir, 99_999).length > MAX_SOCKET_PATH) {
    fact = withoutNamespace(
      fact,
      `the data dir's path is too long for a Unix socket (${socketDir})`,
    );
  }
  const bound = async (sizing: GroupSizing) => {
    const total = Deno.systemMemoryInfo().total;
    const memoryMb = sizing.memoryMb ?? defaultBrowserMemoryMb(total, sizing.maxSessions);
    const opened = await openBrowserGroups({
      mode: options?.mode,
      instance: basename(dirs.instanceDir),
      limits: {
        memoryBytes: memoryMb * 2 ** 20,
        pids: BROWSER_PIDS_MAX,
        cpuWeight: BROWSER_CPU_WEIGHT,
      },
      log: (line) => log(`browser cgroups: ${line}`),
    });
    const groups = opened.groups;
    if (groups) teardown.defer("browser cgroups", () => groups.close());
    const bounded = { ...fact, cgroup: opened.fact };
    log(`browser isolation: ${describeIsolation(bounded)}`);
    return { fact: bounded, groups };
  };
  if (fact.kind !== "netns") return { fact, proxy: {}, launcher: () => undefined, bound };
  teardown.defer(
    "proxy sockets",
    () => Deno.remove(socketDir, { recursive: true }).catch(() => {}),
  );
  await Deno.mkdir(socketRoot, { recursive: true, mode: 0o700 });
  await Deno.chmod(socketRoot, 0o700);
  await sweepSockets(socketRoot, dirname(dirs.instanceDir));
  await Deno.mkdir(socketDir, { mode: 0o700 });
  await Deno.chmod(socketDir, 0o700);
  return {
    fact,
    bound,
    proxy: { socketDir, socketOwner: fact.user },
    launcher: (proxy) =>
      new NetnsIsolation({
        fact,
        socketOf: (port) => proxy.socketOf(port),
        dataDir,
        testArgs: options?.testArgs,
      }),
  };
}

/**
 * Refuses a session whose policy sets `require_isolation` when this machine gives its
 * browsers no namespace or no cgroup: `ISOLATION_UNAVAILABLE`, audited before it is thrown
 * (fail closed).
 */
export function requireIsolation(
  policy: Pick<PolicyFile, "require_isolation">,
  fact: IsolationFact,
  audit: AuditSink,
  agent: string | null,
): void {
  const missing = isolationMissing(fact);
  if (!policy.require_isolation || missing === undefined) return;
  audit.append({
    kind: "session_refused",
    source: "lifecycle",
    decision: "deny",
    reason: "ISOLATION_UNAVAILABLE",
    agent,
  });
  throw new IsolationError(
    "ISOLATION_UNAVAILABLE",
    `the policy requires browser isolation (require_isolation), which this machine cannot give: ${missing}`,
  );
}

/** Removes socket directories whose profile instance is gone (a crashed runtime's). */
async function sweepSockets(socketRoot: string, profilesRoot: string): Promise<void> {
  for await (const e of Deno.readDir(socketRoot)) {
    try {
      await Deno.stat(join(profilesRoot, e.name));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) continue;
      await Deno.remove(join(socketRoot, e.name), { recursive: true }).catch(() => {});
    }
  }
}
