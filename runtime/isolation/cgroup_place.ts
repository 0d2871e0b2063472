/**
 * Where this process may make control groups for its browsers, read from the kernel's own
 * description of it (`/proc/self/cgroup`, `/proc/self/mountinfo`, as a child shell sees
 * them: it shares the runtime's groups and mounts) without touching anything:
 *
 * - **cgroup v2** when the unified hierarchy's `memory` and `pids` controllers are there for
 *   the groups: under the runtime's own cgroup's parent (a cgroup that holds processes cannot
 *   also hand controllers to children, so the browsers' groups are its siblings; when the
 *   runtime sits in the root cgroup, under the root). With systemd that parent is what
 *   `Delegate=yes` hands over.
 * - **cgroup v1 (hybrid host)** when v2 has no memory controller but a v1 `memory` hierarchy
 *   is mounted: under the runtime's own group of each v1 controller (`memory`, and `pids` and
 *   `cpu` when mounted); v1 has no rule against groups beside processes.
 * - otherwise none, with the one-line reason.
 *
 * Every group lives under `<place>/omotai/<instance>/`.
 *
 * @module
 */
import { dirname } from "node:path";
import { kernelFs } from "./cgroup_shell.ts";

/** The directory every group of every runtime goes under, inside a place's directory. */
export const CGROUP_DIR = "omotai";

/** The controllers a browser's group is bounded by. */
export type CgroupController = "memory" | "pids" | "cpu";

/** Where the groups are made. */
export type CgroupPlace =
  | {
    backend: "v2";
    /** The cgroup2 directory the `omotai/` directory goes into. */
    dir: string;
    /** Controllers available there (`memory` and `pids` always; `cpu` when it is). */
    controllers: CgroupController[];
  }
  | {
    backend: "v1";
    /** Per mounted v1 controller, the runtime's own group's directory (`memory` always). */
    dirs: Partial<Record<CgroupController, string>> & { memory: string };
  };

/** What `locateCgroups` found: a place, or why there is none. */
export type CgroupLocation = { place: CgroupPlace } | { reason: string };

/** The kernel's files the lookup reads (replaced by tests). */
export interface CgroupLookup {
  /** `/proc/self/cgroup`'s text. */
  procCgroup(): Promise<string>;
  /** `/proc/self/mountinfo`'s text. */
  mountinfo(): Promise<string>;
  /** A file's text (a cgroup's `cgroup.controllers`), or undefined when unreadable. */
  read(path: string): Promise<string | undefined>;
}

/** The real files, as a child shell of this process reads them. */
export const systemLookup: CgroupLookup = {
  procCgroup: () => kernelFs.read("/proc/self/cgroup"),
  mountinfo: () => kernelFs.read("/proc/self/mountinfo"),
  read: (path) => kernelFs.read(path).catch(() => undefined),
};

interface Mount {
  /** The hierarchy's directory this mount shows (`/` unless a namespace's). */
  root: string;
  point: string;
  fstype: string;
  options: string[];
}

/** Finds where groups can be made; never writes, never throws. */
export async function locateCgroups(
  lookup: CgroupLookup = systemLookup,
): Promise<CgroupLocation> {
  let procCgroup: string;
  let mountinfo: string;
  try {
    procCgroup = await lookup.procCgroup();
    mountinfo = await lookup.mountinfo();
  } catch (err) {
    return { reason: `cannot read this process's cgroups (${(err as Error).message})` };
  }
  const mounts = parseMounts(mountinfo);
  const lines = procCgroup.split("\n").filter(Boolean).map((l) => {
    const [, list = "", ...rest] = l.split(":");
    return { controllers: list.split(",").filter(Boolean), path: rest.join(":") };
  });
  const unified = lines.find((l) => l.controllers.length === 0);
  const v2Mount = mounts.find((m) => m.fstype === "cgroup2");
  let v2Why = "no cgroup2 mount";
  if (unified && v2Mount) {
    const own = pathIn(v2Mount, unified.path);
    if (own === undefined) {
      v2Why = "this process's cgroup2 group is outside the mounted hierarchy";
    } else {
      // A cgroup with processes cannot also hand controllers to children (but the root can).
      const dir = unified.path === "/" ? own : dirname(own);
      const available = ((await lookup.read(`${dir}/cgroup.controllers`)) ?? "").trim().split(
        /\s+/,
      );
      if (available.includes("memory") && available.includes("pids")) {
        const controllers: CgroupController[] = ["memory", "pids"];
        if (available.includes("cpu")) controllers.push("cpu");
        return { place: { backend: "v2", dir, controllers } };
      }
      v2Why = `cgroup2 has no memory and pids controllers for ${dir} (it has: ${
        available.filter(Boolean).join(", ") || "none"
      })`;
    }
  }
  const dirs: Partial<Record<CgroupController, string>> = {};
  for (const controller of ["memory", "pids", "cpu"] as const) {
    const line = lines.find((l) => l.controllers.includes(controller));
    const mount = mounts.find((m) => m.fstype === "cgroup" && m.options.includes(controller));
    const dir = line && mount ? pathIn(mount, line.path) : undefined;
    if (dir !== undefined) dirs[controller] = dir;
  }
  if (dirs.memory !== undefined) {
    return { place: { backend: "v1", dirs: { ...dirs, memory: dirs.memory } } };
  }
  return { reason: `${v2Why}, and no cgroup v1 memory hierarchy` };
}

/**
 * Where the cgroup2 hierarchy is mounted (`/sys/fs/cgroup`, `/sys/fs/cgroup/unified` on a
 * hybrid host), from mountinfo's text; undefined without one.
 */
export function cgroup2Mount(mountinfo: string): string | undefined {
  return parseMounts(mountinfo).find((m) => m.fstype === "cgroup2" && m.root === "/")?.point;
}

/** One line: `cgroup v2`, `cgroup v1 (hybrid host)`. */
export function describePlace(place: CgroupPlace): string {
  return place.backend === "v2" ? "cgroup v2" : "cgroup v1 (hybrid host)";
}

function parseMounts(text: string): Mount[] {
  const out: Mount[] = [];
  for (const line of text.split("\n")) {
    // `id parent major:minor root point options [optional...] - fstype source super`
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const f = left.split(" ");
    const [fstype, , superOptions = ""] = right.split(" ");
    if (f.length < 5 || !fstype) continue;
    out.push({
      root: unescape(f[3]),
      point: unescape(f[4]),
      fstype,
      options: superOptions.split(","),
    });
  }
  return out;
}

/** The directory of hierarchy path `path` under `mount`, if the mount shows it. */
function pathIn(mount: Mount, path: string): string | undefined {
  const root = mount.root === "/" ? "" : mount.root;
  if (root !== "" && path !== root && !path.startsWith(`${root}/`)) return undefined;
  const rest = path.slice(root.length);
  return `${mount.point}${rest === "/" ? "" : rest}`;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}
