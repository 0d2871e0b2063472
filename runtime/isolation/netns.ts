/**
 * A browser in a network namespace of its own (bubblewrap), whose only interface is its own
 * loopback: the one way out is the session's egress proxy listener, a Unix socket bind-mounted
 * into the sandbox and bridged onto the namespace's loopback by a forwarder. DNS, UDP, raw
 * TCP, the console's port and every other service on the host's loopback are not routable
 * from inside, whatever the browser (or code that took it over) does with its flags.
 *
 * The sandbox sees the host's file system read-only, with its own `/dev`, `/proc` (own pid
 * namespace: killing bubblewrap ends every process inside), an empty `/tmp` and `/run` (no
 * host Unix socket is reachable by path; abstract sockets belong to the network namespace),
 * the data dir hidden under an empty directory (`hiddenRoot`), and read-write only its
 * profile (at its own path, reached through empty directories) and its socket's directory
 * (`/tmp/omotai/egress`). When the
 * runtime is root, `setpriv` drops to the browser's own user before anything runs inside:
 * a real uid change (real, effective and saved uid and gid, supplementary groups cleared,
 * every capability dropped from the bounding set), not a user-namespace mapping that would
 * still be root to the kernel for what the namespace owns. Chromium then keeps its own
 * sandbox (user namespaces and seccomp-bpf) on. Bubblewrap keeps the descriptors it
 * inherits, so fds 3 and 4 (the CDP pipe) reach Chromium untouched.
 *
 * **The forwarder is socat**, not a Deno script: one small C process per session (about
 * 1–2 MB resident, plus a short-lived fork per proxy connection sharing its pages) where a
 * Deno forwarder would be a second V8 isolate of 30–40 MB per session, against the target of
 * 150 MB per session at ten sessions. It has no policy of its own: it relays bytes from the
 * namespace's loopback to the one socket; every decision stays in the proxy.
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import type { LaunchOptions } from "../../cdp/mod.ts";
import { IsolationError, type IsolationFact, NAMESPACE_ARGS } from "./detect.ts";

/** The wrapper a launch runs the browser under (cdp's `LaunchWrap`). */
export type LaunchWrap = NonNullable<LaunchOptions["wrap"]>;

/** Where the sandbox's own files are, inside it. */
export const SANDBOX_DIR = "/tmp/omotai";
/** The directory of the proxy's socket as the forwarder sees it. */
export const EGRESS_INSIDE = `${SANDBOX_DIR}/egress`;

/** How one sandbox is made. */
export interface SandboxSpec {
  /** The profile directory on the host; the browser sees it at the same path. */
  profileDir: string;
  /** The data dir (database, vault, CA key): the sandbox sees it empty but for the profile. */
  dataDir?: string;
  /** Paths that must stay visible (the browser executable). */
  keep?: readonly string[];
  /** The session's proxy socket on the host and the port its forwarder listens on inside. */
  proxy?: { socket: string; port: number };
}

/** Top-level directories the browser needs (never replaced by an empty one). */
const SYSTEM_DIRS = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "nix",
  "opt",
  "proc",
  "sbin",
  "snap",
  "srv",
  "sys",
  "usr",
  "var",
]);

/**
 * The directory the sandbox sees empty so that the data dir is out of sight: the data dir's
 * top-level directory (a home, `/root`, a volume: nothing a browser needs, and nothing on
 * the way down it could be refused by), or the data dir itself under a system directory or
 * when a kept path lies in the top-level one. Undefined under /tmp and /run (empty already).
 */
export function hiddenRoot(dataDir: string, keep: readonly string[] = []): string | undefined {
  const parts = dataDir.split("/").filter(Boolean);
  if (parts.length === 0) return undefined;
  const top = `/${parts[0]}`;
  if (top === "/tmp" || top === "/run") return undefined;
  if (SYSTEM_DIRS.has(parts[0]) || keep.some((k) => inside(k, top))) return dataDir;
  return top;
}

function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/**
 * The forwarder, then the program: `$1` is the forwarder's port (empty: none), the rest is
 * the program. It waits until the forwarder listens, so the browser's first connection finds
 * it; the forwarder does not keep the CDP pipe's descriptors.
 */
const SANDBOX_SCRIPT = [
  `port=$1; shift`,
  `if [ -n "$port" ]; then`,
  `  socat "TCP-LISTEN:$port,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:${EGRESS_INSIDE}/proxy.sock" </dev/null 3>&- 4>&- &`,
  `  hex=$(printf %04X "$port"); n=0`,
  `  until grep -q "0100007F:$hex 00000000:0000 0A" /proc/net/tcp; do`,
  `    n=$((n+1)); if [ "$n" -gt 500 ]; then echo "omotai: the forwarder did not start" >&2; exit 71; fi`,
  `    sleep 0.01`,
  `  done`,
  `fi`,
  `exec "$@"`,
].join("\n");

/**
 * The command prefix that runs a program in a fresh sandbox: append the program and its
 * arguments. `fact` must be `netns`.
 */
export function sandboxCommand(fact: IsolationFact, spec: SandboxSpec): string[] {
  const tools = fact.tools;
  if (fact.kind !== "netns" || !tools) {
    throw new IsolationError("ISOLATION_UNAVAILABLE", fact.reason ?? "no network namespace here");
  }
  const args = [
    tools.bwrap,
    ...NAMESPACE_ARGS,
    "--unshare-ipc",
    "--unshare-uts",
    "--new-session",
    // The browser's user must be able to make its temporary files (sticky, like the host's).
    "--perms",
    "1777",
    "--tmpfs",
    "/tmp",
    "--tmpfs",
    "/run",
  ];
  // The profile keeps its path (the browser's command line names it), on a way down that
  // shows nothing else: the directory hiding the data dir, then one empty directory per step.
  // Directories bubblewrap makes are 0700 root's unless told: the browser's user passes them.
  const hidden = spec.dataDir !== undefined ? hiddenRoot(spec.dataDir, spec.keep) : undefined;
  if (hidden !== undefined) args.push("--perms", "0755", "--tmpfs", hidden);
  const from = hidden ??
    (/^\/(tmp|run)\//.test(spec.profileDir) ? spec.profileDir.slice(0, 4) : "");
  if (from !== "" && inside(spec.profileDir, from)) {
    let dir = from;
    for (const part of dirname(spec.profileDir).slice(from.length).split("/").filter(Boolean)) {
      dir = `${dir}/${part}`;
      args.push("--perms", "0755", "--dir", dir);
    }
  }
  args.push("--bind", spec.profileDir, spec.profileDir);
  if (spec.proxy) {
    args.push("--perms", "0755", "--dir", SANDBOX_DIR);
    args.push("--bind", dirname(spec.proxy.socket), EGRESS_INSIDE);
  }
  args.push("--chdir", "/", "--");
  if (fact.user) {
    if (!tools.setpriv) {
      throw new IsolationError(
        "ISOLATION_UNAVAILABLE",
        "setpriv is needed to drop to the browser user",
      );
    }
    args.push(
      tools.setpriv,
      `--reuid=${fact.user.uid}`,
      `--regid=${fact.user.gid}`,
      "--clear-groups",
      "--inh-caps=-all",
      "--bounding-set=-all",
      "--",
    );
  }
  args.push(
    "/bin/sh",
    "-c",
    SANDBOX_SCRIPT,
    "omotai-sandbox",
    spec.proxy ? String(spec.proxy.port) : "",
  );
  return args;
}

/** The loopback proxy port a browser's flags name (`--proxy-server=http://127.0.0.1:PORT`). */
export function proxyPortOf(args: readonly string[]): number | undefined {
  for (const a of args) {
    const m = /^--proxy-server=http:\/\/127\.0\.0\.1:(\d{1,5})$/.exec(a);
    if (m) return Number(m[1]);
  }
  return undefined;
}

/** What a `NetnsIsolation` needs. */
export interface NetnsOptions {
  /** A `netns` fact (`detectIsolation()`). */
  fact: IsolationFact;
  /** The proxy socket of the listener whose forwarder port is `port` (`EgressProxy.socketOf`). */
  socketOf(port: number): string | undefined;
  /** The data dir, out of the browser's sight (`hiddenRoot`). */
  dataDir?: string;
  /**
   * Tests only: the browser's flags as launched, after the sandbox was prepared (a test
   * removes `--proxy-server` to play a browser that ignores its proxy).
   */
  testArgs?(args: string[]): string[];
}

/**
 * Puts each browser of a session into its own sandbox: the seam `runtime/browser/launch.ts`
 * calls (`LaunchIsolation`), built in `cli/`.
 */
export class NetnsIsolation {
  readonly fact: IsolationFact;
  readonly #options: NetnsOptions;

  constructor(options: NetnsOptions) {
    if (options.fact.kind !== "netns") {
      throw new IsolationError(
        "ISOLATION_UNAVAILABLE",
        options.fact.reason ?? "no network namespace here",
      );
    }
    this.fact = options.fact;
    this.#options = options;
  }

  /**
   * Copies `files` (real paths the runtime checked) into `<profileDir>/omotai-uploads/<n>/`,
   * the one host directory the sandboxed browser sees, owned by its user: the operator's
   * upload directory stays out of the browser's sight and needs no permissions for its user.
   */
  async stage(profileDir: string, files: readonly string[]): Promise<string[]> {
    const user = this.fact.user;
    const own = (path: string) => user ? Deno.chown(path, user.uid, user.gid) : Promise.resolve();
    const root = join(await Deno.realPath(profileDir), "omotai-uploads");
    await Deno.mkdir(root, { recursive: true, mode: 0o700 });
    await own(root);
    const out: string[] = [];
    for (const file of files) {
      // One directory per file, so two files of the same name keep their names.
      const dir = await Deno.makeTempDir({ dir: root, prefix: "u" });
      await own(dir);
      const copy = join(dir, basename(file));
      await Deno.copyFile(file, copy);
      await Deno.chmod(copy, 0o600);
      await own(copy);
      out.push(copy);
    }
    return out;
  }

  /** The wrapper and flags for a browser with `profileDir` (made the browser user's) and `args`. */
  async prepare(
    { executable, profileDir, args }: {
      executable: string;
      profileDir: string;
      args: readonly string[];
    },
  ): Promise<{ wrap: LaunchWrap; args: string[] }> {
    const port = proxyPortOf(args);
    const socket = port === undefined ? undefined : this.#options.socketOf(port);
    if (port !== undefined && socket === undefined) {
      // A loopback port of the host is unreachable from the namespace: refuse, do not guess.
      throw new IsolationError(
        "ISOLATION_FAILED",
        "the session's egress proxy listens on no socket the sandbox can reach",
      );
    }
    const user = this.fact.user;
    if (user) {
      await Deno.chown(profileDir, user.uid, user.gid);
      await Deno.chmod(profileDir, 0o700);
    }
    // The sandbox starts in / and mounts by absolute path: a relative data dir is resolved.
    const seen = await Deno.realPath(profileDir);
    const command = sandboxCommand(this.fact, {
      profileDir: seen,
      dataDir: this.#options.dataDir,
      keep: [executable],
      proxy: socket !== undefined && port !== undefined ? { socket, port } : undefined,
    });
    const flags = [...args];
    return {
      wrap: {
        command,
        profileDir: seen !== profileDir ? seen : undefined,
        sandbox: this.fact.sandbox,
      },
      args: this.#options.testArgs ? this.#options.testArgs(flags) : flags,
    };
  }
}
