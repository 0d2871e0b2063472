/**
 * Which cgroup backend this start's browsers get, and the fact that says so: groups the
 * runtime makes on cgroupfs (`cgroup.ts`, v2 or v1 on a hybrid host), a scope per browser
 * made by `systemd-run` (`systemd_scope.ts`), or none, with every reason, in one line.
 *
 * @module
 */
import { basename } from "node:path";
import type { BrowserLimits } from "./cgroup_oom.ts";
import {
  type CgroupLookup,
  type CgroupPlace,
  describePlace,
  locateCgroups,
} from "./cgroup_place.ts";
import type { CgroupFs } from "./cgroup_shell.ts";
import { BrowserGroups } from "./cgroup.ts";
import { detectSystemd, type SystemdLocation, SystemdScopes } from "./systemd_scope.ts";

/** What bounds this start's browsers get, as banners, the console and the audit show it. */
export interface CgroupFact {
  /**
   * `v2` (groups the runtime makes on cgroupfs), `v1` (a hybrid host), `systemd` (a scope
   * per browser that systemd makes, `systemd_scope.ts`), or `none`.
   */
  backend: "v2" | "v1" | "systemd" | "none";
  /** Why `none`, in one line. */
  reason?: string;
  /** For `systemd`: whose manager makes the scopes (the system's as root, else the user's). */
  manager?: "system" | "user";
  /** What each browser's group bounds (not for `none`). */
  limits?: BrowserLimits;
}

/** One line: `cgroup v1 (hybrid host): memory 512 MiB, ...`, or `none (why)`. */
export function describeCgroup(fact: CgroupFact): string {
  if (fact.backend === "none") return `none (${fact.reason ?? "no cgroups"})`;
  const head = fact.backend === "v2"
    ? "cgroup v2"
    : fact.backend === "v1"
    ? "cgroup v1 (hybrid host)"
    : `cgroup v2 by systemd-run scope (${fact.manager ?? "system"} manager)`;
  const l = fact.limits;
  return l
    ? `${head}: memory ${
      Math.round(l.memoryBytes / 2 ** 20)
    } MiB without swap, ${l.pids} pids, cpu weight ${l.cpuWeight}`
    : head;
}

/** How `openBrowserGroups` looks. */
export interface OpenGroupsOptions {
  /** `off`: none without looking ("turned off"). */
  mode?: "auto" | "off";
  /** The runtime instance's name; its groups go under `omotai/<instance>`. */
  instance: string;
  limits: BrowserLimits;
  log(line: string): void;
  lookup?: CgroupLookup;
  fs?: CgroupFs;
  os?: typeof Deno.build.os;
  /**
   * Whether systemd runs the host and can make scopes (`detectSystemd`). Default: the host's,
   * asked only without a `lookup` (a hierarchy laid out by a test is not the host's systemd's).
   */
  systemd?(): Promise<SystemdLocation>;
}

/**
 * Finds where browser groups can be made and makes this instance's: the groups and the
 * fact, or `none` and why (no writable cgroup hierarchy with a memory controller, no
 * delegation), in one line. Never throws.
 *
 * In order: a cgroup2 subtree the runtime may write (where systemd runs the host, only one
 * its unit delegates: the runtime runs in a sub-group of a `.service` or `.scope`; systemd's
 * own slices are its to write); else, where systemd runs the host, a scope per browser made
 * by `systemd-run`; else cgroup v1 on a hybrid host; else none, with every reason.
 */
export async function openBrowserGroups(
  options: OpenGroupsOptions,
): Promise<{ fact: CgroupFact; groups?: BrowserGroups | SystemdScopes }> {
  const none = (reason: string) => ({ fact: { backend: "none" as const, reason } });
  if (options.mode === "off") return none("isolation turned off");
  const os = options.os ?? Deno.build.os;
  if (os !== "linux") return none(`cgroups need Linux (this is ${os})`);
  const found = await locateCgroups(options.lookup);
  const systemd = await (options.systemd ??
    (options.lookup
      ? () => Promise.resolve({ running: false as const })
      : () => detectSystemd()))();
  type Opened = { fact: CgroupFact; groups: BrowserGroups } | { reason: string };
  const open = async (place: CgroupPlace): Promise<Opened> => {
    try {
      const groups = await BrowserGroups.open({ ...options, place });
      return { fact: { backend: place.backend, limits: options.limits }, groups };
    } catch (err) {
      return { reason: `${describePlace(place)} is not writable here: ${errorText(err)}` };
    }
  };
  const reasons: string[] = [];
  if ("reason" in found) reasons.push(found.reason);
  else if (found.place.backend === "v2") {
    if (systemd.running && !delegated(found.place.dir)) {
      reasons.push(`systemd did not delegate ${found.place.dir} to the runtime`);
    } else {
      const opened = await open(found.place);
      if (!("reason" in opened)) return opened;
      reasons.push(opened.reason);
    }
  }
  if (systemd.running) {
    if ("host" in systemd) {
      const groups = new SystemdScopes({ ...options, host: systemd.host });
      const manager = systemd.host.user ? "user" as const : "system" as const;
      return { fact: { backend: "systemd", manager, limits: options.limits }, groups };
    }
    reasons.push(`no systemd scopes: ${systemd.reason}`);
  }
  if ("place" in found && found.place.backend === "v1") {
    const opened = await open(found.place);
    if (!("reason" in opened)) return opened;
    reasons.push(opened.reason);
  }
  return none(reasons.join("; "));
}

/**
 * Whether systemd handed `dir` over: only a unit with `Delegate=` lets processes live in a
 * sub-group of its own cgroup (`<unit>.service/<group>`), so a parent named after a service or
 * a scope is one; a slice, or the root, is systemd's own.
 */
function delegated(dir: string): boolean {
  const name = basename(dir);
  return name.endsWith(".service") || name.endsWith(".scope");
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 160) : String(err);
}
