/**
 * The cgroup file system, reached through a POSIX shell. Deno asks for `--allow-all` before
 * it touches anything under `/sys` or `/proc/self` (their files can reach past its
 * permissions), and the runtime never runs with it: each operation is one short `/bin/sh`
 * run with the paths as its arguments, never spliced into its script. The shell is the same
 * one that puts each browser into its group (`BrowserGroup.wrap`), so the runtime is granted
 * nothing more for it (and a shell runs nothing that `nice`, granted already, could not).
 *
 * @module
 */

/** The shell every cgroup operation runs in (the launcher grants it). */
export const ENTER_SHELL = "/bin/sh";

/** The operations on a cgroup hierarchy (tests lay one out in a temp directory). */
export interface CgroupFs {
  /** Makes a group (the kernel fills it with its interface files); one that exists is fine. */
  mkdir(path: string): Promise<void>;
  /** Writes an interface file that exists (never creates one). */
  write(path: string, text: string): Promise<void>;
  /** An interface file's text; rejects when it cannot be read. */
  read(path: string): Promise<string>;
  exists(path: string): Promise<boolean>;
  /** Removes an empty group; rejects while processes are in it (EBUSY). */
  rmdir(path: string): Promise<void>;
}

/** Why a cgroup operation failed: the shell's first line of complaint. */
export class CgroupFsError extends Error {
  override name = "CgroupFsError";
}

/** Runs `script` with `args` as `$1…`; its stdout, or rejects with its stderr. */
export async function runShell(script: string, args: readonly string[]): Promise<string> {
  const out = await new Deno.Command(ENTER_SHELL, {
    args: ["-c", script, "omotai-cgroup", ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", LC_ALL: "C" },
  }).output();
  const text = new TextDecoder();
  if (out.success) return text.decode(out.stdout);
  const why = text.decode(out.stderr).trim().split("\n")[0]?.replace(/^\S*sh: (\d+: )?/, "");
  throw new CgroupFsError(why?.slice(0, 200) || `exit code ${out.code}`);
}

/** cgroupfs as the kernel shows it, through the shell. */
export const kernelFs: CgroupFs = {
  mkdir: (path) => runShell(`[ -d "$1" ] || mkdir "$1"`, [path]).then(() => {}),
  // An interface file the kernel does not offer is an error, not a new plain file.
  write: (path, text) =>
    runShell(
      `[ -e "$1" ] || { echo "no such file: $1" >&2; exit 2; }; printf '%s\\n' "$2" > "$1"`,
      [
        path,
        text,
      ],
    ).then(() => {}),
  read: (path) =>
    runShell(`while IFS= read -r l || [ -n "$l" ]; do printf '%s\\n' "$l"; done < "$1"`, [path]),
  exists: (path) =>
    runShell(`[ -e "$1" ] && echo y || echo n`, [path]).then((o) => o.trim() === "y"),
  rmdir: (path) => runShell(`[ ! -d "$1" ] || rmdir "$1"`, [path]).then(() => {}),
};
