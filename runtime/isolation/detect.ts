/**
 * What isolation this machine can give a session's browser, found once per start: `netns`
 * (a network namespace of its own whose only way out is the egress proxy, see `netns.ts`)
 * or `none`, with the one-line reason why not (not Linux, no bubblewrap or socat, bubblewrap
 * unable to create namespaces here: user namespaces off, a container's seccomp profile).
 *
 * When the runtime runs as root it also finds the browser's own user (`omotai-browser`,
 * created at install, or the one `--browser-user` names): the browser then runs as that
 * unprivileged uid with Chromium's sandbox on. Without that user a root runtime keeps
 * today's `--no-sandbox` browser (inside the namespace when there is one), and says so.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";
import { type CgroupFact, describeCgroup } from "./cgroup_backend.ts";

/** The user the browser runs as when the runtime is root. */
export interface BrowserUser {
  name: string;
  uid: number;
  gid: number;
}

/** A session's isolation, as banners, the console and the audit show it. */
export type IsolationKind = "netns" | "none";

/** What the detection found. */
export interface IsolationFact {
  kind: IsolationKind;
  /** Why `none`, in one line; for `netns`, what is weaker than the full form (no own user). */
  reason?: string;
  /** The browser's own user (root runtimes only; otherwise the browser runs as the runtime). */
  user?: BrowserUser;
  /** Whether Chromium's sandbox is on (off only for a root runtime without a browser user). */
  sandbox: boolean;
  /** The programs a netns launch runs (set when `kind` is `netns`). */
  tools?: IsolationTools;
  /**
   * The browsers' cgroup, found separately (`openBrowserGroups`, once the runtime's policy
   * sizes it); absent until then, and counted as none.
   */
  cgroup?: CgroupFact;
}

/** The programs a netns launch runs. */
export interface IsolationTools {
  bwrap: string;
  socat: string;
  /** Drops from root to the browser's user (util-linux); set when `user` is. */
  setpriv?: string;
}

/**
 * The namespaces and mounts every sandbox starts from (`netns.ts` adds the rest): the probe
 * tries exactly these, so a machine that passes it can make a browser's sandbox.
 */
export const NAMESPACE_ARGS: readonly string[] = [
  "--unshare-net",
  "--unshare-pid",
  "--die-with-parent",
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
];

/** The default name of the browser's user. */
export const BROWSER_USER = "omotai-browser";

/** Where the tools are looked for: where Debian puts them, and what the launcher grants. */
export const TOOL_DIRS: readonly string[] = ["/usr/bin"];

/** Files the detection reads (the launcher grants them). */
export const DETECT_READS: readonly string[] = [
  "/etc/passwd",
  ...["bwrap", "socat", "setpriv"].flatMap((t) => TOOL_DIRS.map((d) => `${d}/${t}`)),
];

/** Why a browser cannot have the isolation it was to get. */
export type IsolationErrorCode =
  /** No namespace here (its reason says why), and one was required. */
  | "ISOLATION_UNAVAILABLE"
  /** A launch could not be put into its namespace (no proxy socket to bridge). */
  | "ISOLATION_FAILED"
  /** `--browser-user` names no user of this machine. */
  | "BROWSER_USER_UNKNOWN"
  /** `--browser-user` names root. */
  | "BROWSER_USER_INVALID";

/** A browser user that cannot be used, or a sandbox that cannot be made. */
export class IsolationError extends OmotaiError<IsolationErrorCode> {}

/** How to detect; every look at the system can be replaced (tests). */
export interface DetectOptions {
  /** `off`: `none` without looking ("turned off"). Default `auto`. */
  mode?: "auto" | "off";
  /** The browser user's name or uid (`--browser-user`); default `omotai-browser`, if it exists. */
  browserUser?: string;
  os?: typeof Deno.build.os;
  /** This process's uid (undefined where there is none). */
  uid?: number;
  /** The path of a tool, or undefined. */
  which?(name: string): string | undefined;
  /** /etc/passwd's text. */
  passwd?(): string;
  /** Tries a namespace with bubblewrap: undefined when it works, else why not. */
  probe?(bwrap: string): Promise<string | undefined>;
}

/** Finds what isolation a browser can have here. */
export async function detectIsolation(options: DetectOptions = {}): Promise<IsolationFact> {
  const os = options.os ?? Deno.build.os;
  const uid = options.uid ?? currentUid();
  const user = browserUser(options, uid);
  const sandbox = uid !== 0 || user !== undefined;
  // Without the namespace there is no uid switch: the browser runs as the runtime does.
  const none = (reason: string): IsolationFact => ({ kind: "none", reason, sandbox: uid !== 0 });
  if (options.mode === "off") return none("isolation turned off");
  if (os !== "linux") return none(`network namespaces need Linux (this is ${os})`);
  const which = options.which ?? findTool;
  const bwrap = which("bwrap");
  if (!bwrap) return none("bubblewrap is not installed (apt-get install bubblewrap)");
  const socat = which("socat");
  if (!socat) return none("socat is not installed (apt-get install socat)");
  let setpriv: string | undefined;
  if (user) {
    setpriv = which("setpriv");
    if (!setpriv) return none("setpriv (util-linux) is not installed");
  }
  const failed = await (options.probe ?? probeBwrap)(bwrap);
  if (failed) return none(`bubblewrap cannot create a namespace here: ${failed}`);
  const reason = uid === 0 && !user
    ? `no ${BROWSER_USER} user: the browser runs as root without its sandbox (useradd --system ${BROWSER_USER})`
    : undefined;
  return { kind: "netns", reason, user, sandbox, tools: { bwrap, socat, setpriv } };
}

/** `fact` without its namespace, for `reason`: the browser then runs as the runtime does. */
export function withoutNamespace(fact: IsolationFact, reason: string): IsolationFact {
  return {
    kind: "none",
    reason,
    sandbox: fact.sandbox && fact.user === undefined,
    // A cgroup does not need the namespace: kept when there is one, no key when not.
    ...(fact.cgroup ? { cgroup: fact.cgroup } : {}),
  };
}

/**
 * One line for banners and logs: `netns`, or `none (why)`, then the cgroup when it is known
 * (`; cgroup v1 (hybrid host): memory 512 MiB ...`, `; cgroup: none (why)`).
 */
export function describeIsolation(fact: IsolationFact): string {
  const who = fact.user
    ? `, browser user ${fact.user.name} (${fact.user.uid})`
    : fact.sandbox
    ? ""
    : ", no sandbox";
  const cgroup = !fact.cgroup
    ? ""
    : fact.cgroup.backend === "none"
    ? `; cgroup: ${describeCgroup(fact.cgroup)}`
    : `; ${describeCgroup(fact.cgroup)}`;
  return `${fact.kind}${who}${fact.reason ? ` (${fact.reason})` : ""}${cgroup}`;
}

/**
 * What a policy's `require_isolation` asks for and this fact lacks, in one line: no
 * namespace, no cgroup; undefined when it has both.
 */
export function isolationMissing(fact: IsolationFact): string | undefined {
  const missing: string[] = [];
  if (fact.kind !== "netns") missing.push(fact.reason ?? "no network namespace");
  if (!fact.cgroup || fact.cgroup.backend === "none") {
    missing.push(`no cgroup: ${fact.cgroup?.reason ?? "not found"}`);
  }
  return missing.length > 0 ? missing.join("; ") : undefined;
}

function browserUser(options: DetectOptions, uid: number | undefined): BrowserUser | undefined {
  if (uid !== 0) return undefined;
  const named = options.browserUser;
  let text = "";
  try {
    text = (options.passwd ?? (() => Deno.readTextFileSync("/etc/passwd")))();
  } catch {
    // Unreadable: only a named user is an error then.
  }
  const wanted = named ?? BROWSER_USER;
  for (const line of text.split("\n")) {
    const [name, , u, g] = line.split(":");
    if (name === undefined || u === undefined || g === undefined) continue;
    if (name === wanted || (/^\d+$/.test(wanted) && u === wanted)) {
      const user = { name, uid: Number(u), gid: Number(g) };
      if (user.uid === 0) {
        throw new IsolationError("BROWSER_USER_INVALID", `the browser user ${name} is root`);
      }
      return user;
    }
  }
  if (named !== undefined) {
    throw new IsolationError(
      "BROWSER_USER_UNKNOWN",
      `no user ${named} on this machine (create it: useradd --system ${named})`,
    );
  }
  return undefined;
}

function currentUid(): number | undefined {
  try {
    return Deno.uid() ?? undefined;
  } catch {
    return undefined;
  }
}

function findTool(name: string): string | undefined {
  for (const dir of TOOL_DIRS) {
    const path = `${dir}/${name}`;
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // Not there, or not ours to look at.
    }
  }
  return undefined;
}

/** Runs `true` in a fresh network and pid namespace: what every launch does, minus the browser. */
async function probeBwrap(bwrap: string): Promise<string | undefined> {
  try {
    const out = await new Deno.Command(bwrap, {
      args: [...NAMESPACE_ARGS, "--", "/bin/true"],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      env: { PATH: "/usr/bin:/bin" },
      clearEnv: true,
    }).output();
    if (out.success) return undefined;
    const text = new TextDecoder().decode(out.stderr).trim().split("\n")[0] ?? "";
    return text.slice(0, 160) || `exit code ${out.code}`;
  } catch (err) {
    return (err as Error).message.slice(0, 160);
  }
}

/**
 * Where `nice` is looked for (coreutils): browsers run below the runtime's CPU priority, so
 * busy renderers never delay a verdict (read and run are granted by the launcher).
 */
export const NICE_PATHS: readonly string[] = TOOL_DIRS.map((d) => `${d}/nice`);

/** The `nice` to start browsers under; none (browsers then keep the runtime's priority). */
export function findNice(): string | undefined {
  return findTool("nice");
}
