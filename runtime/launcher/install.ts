/**
 * `deno task install`: puts an `omotai` command on PATH (`$DENO_INSTALL_ROOT/bin`, by
 * default `~/.deno/bin`) that runs the launcher of this checkout, from any directory.
 *
 * It is `deno install -g` with the launcher's flags and this checkout's config, plus one
 * change to the script Deno writes: that script calls `deno` from PATH, while the launcher's
 * `--allow-run` names the Deno that installed it (the one it re-runs for the runtime). The
 * script is made to call that same Deno by its path, so the two always agree and the command
 * works where no `deno` is on PATH at all (a machine that runs Deno through npx).
 *
 * Run as root on Linux, it also makes the browser's own user (`omotai-browser`, a system user
 * with no home and no shell): a root runtime runs each browser as that uid, sandbox on
 * (runtime/isolation/). Where it may not run `useradd` it prints the command instead.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OmotaiError } from "../mod.ts";
import { BROWSER_USER } from "../isolation/mod.ts";
import { launcherFlags } from "./launcher.ts";

/** The name of the installed command. */
export const COMMAND = "omotai";

const CHECKOUT = fileURLToPath(new URL("../../", import.meta.url));

/** The `deno install` arguments for `deno` and the install root `root`. */
export function installArgs(deno: string, root: string, checkout = CHECKOUT): string[] {
  return [
    "install",
    "--global",
    "--force",
    "--name",
    COMMAND,
    "--root",
    root,
    "--config",
    join(checkout, "deno.json"),
    ...launcherFlags(deno),
    join(checkout, "runtime", "main.ts"),
  ];
}

/**
 * The script `deno install` wrote, calling `deno` at its path instead of from PATH (the POSIX
 * `exec deno …` form and the Windows `@deno …` form). Throws when neither is there: a Deno
 * that writes another form must not leave a command whose Deno differs from its grant.
 */
export function pinDeno(script: string, deno: string): string {
  if (/^exec deno /m.test(script)) {
    return script.replace(/^exec deno /m, `exec '${deno.replaceAll("'", `'\\''`)}' `);
  }
  if (/^@deno /m.test(script)) return script.replace(/^@deno /m, `@"${deno}" `);
  throw new OmotaiError(
    "INSTALL_UNEXPECTED",
    "the command script deno install wrote does not call deno as expected",
  );
}

/** Where `deno install -g` puts commands: `DENO_INSTALL_ROOT`, else `~/.deno`. */
export function installRoot(env: { DENO_INSTALL_ROOT?: string; HOME?: string }): string {
  if (env.DENO_INSTALL_ROOT) return env.DENO_INSTALL_ROOT;
  if (env.HOME) return join(env.HOME, ".deno");
  throw new OmotaiError("INSTALL_ROOT_UNKNOWN", "set DENO_INSTALL_ROOT or HOME");
}

/** The command that makes the browser's own user: a system user, no home, no login shell. */
export function browserUserCommand(name = BROWSER_USER): string[] {
  return [
    "useradd",
    "--system",
    "--no-create-home",
    "--home-dir",
    "/nonexistent",
    "--shell",
    "/usr/sbin/nologin",
    name,
  ];
}

/** Whether `passwd` (the text of /etc/passwd) has a user `name`. */
export function hasUser(passwd: string, name: string): boolean {
  return passwd.split("\n").some((line) => line.split(":")[0] === name);
}

/** As root on Linux: makes the browser's user if it is missing (or says how). */
async function ensureBrowserUser(): Promise<void> {
  if (Deno.build.os !== "linux") return;
  let uid: string | undefined;
  let passwd = "";
  try {
    // Read, not Deno.uid(): the install runs without --allow-sys.
    uid = /^Uid:\s*(\d+)/m.exec(await Deno.readTextFile("/proc/self/status"))?.[1];
    passwd = await Deno.readTextFile("/etc/passwd");
  } catch {
    return;
  }
  if (uid !== "0" || hasUser(passwd, BROWSER_USER)) return;
  const [cmd, ...args] = browserUserCommand();
  try {
    const out = await new Deno.Command(cmd, { args, stdout: "inherit", stderr: "inherit" })
      .output();
    if (out.success) {
      console.log(`omotai: made the browser's user ${BROWSER_USER}`);
      return;
    }
  } catch {
    // Not allowed to run it here, or no useradd: say what to run.
  }
  console.log(
    `omotai: a root runtime runs its browsers as ${BROWSER_USER}, sandbox on; make it with: ${
      browserUserCommand().join(" ")
    }`,
  );
}

async function install(): Promise<number> {
  const deno = Deno.execPath();
  const home = Deno.build.os === "windows" ? Deno.env.get("USERPROFILE") : Deno.env.get("HOME");
  const root = installRoot({ DENO_INSTALL_ROOT: Deno.env.get("DENO_INSTALL_ROOT"), HOME: home });
  const out = await new Deno.Command(deno, {
    args: installArgs(deno, root),
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!out.success) return out.code;
  const bin = join(root, "bin");
  for (const name of [COMMAND, `${COMMAND}.cmd`]) {
    const script = join(bin, name);
    let text: string;
    try {
      text = await Deno.readTextFile(script);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) continue;
      throw err;
    }
    await Deno.writeTextFile(script, pinDeno(text, deno));
  }
  console.log(`omotai: ${join(bin, COMMAND)} runs ${deno} (reinstall after moving Deno)`);
  await ensureBrowserUser();
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await install());
  } catch (err) {
    if (!(err instanceof OmotaiError)) throw err;
    console.error(`omotai install: ${err.code}: ${err.message}`);
    Deno.exit(1);
  }
}
