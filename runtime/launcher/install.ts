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
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { OmotaiError } from "../errors.ts";
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
