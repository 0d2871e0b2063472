/**
 * Where the runtime keeps its database, profiles and keys when no `--data-dir` is given:
 * `OMOTAI_DATA_DIR`, else the platform's per-user state directory. An installed command is
 * started from whatever directory a client happens to use, so the default must not depend
 * on it (a `runs/` under `/` or under a client's install folder is nobody's data).
 *
 * @module
 */
import { isAbsolute, join, resolve } from "node:path";
import { OmotaiError } from "../mod.ts";

/** No data directory can be worked out (no `HOME` and nothing else given). */
export class DataDirError extends OmotaiError {
  constructor(message: string) {
    super("DATA_DIR_UNKNOWN", message);
  }
}

/** The environment variables the resolution reads, and nothing else. */
export const DATA_DIR_ENV = [
  "OMOTAI_DATA_DIR",
  "XDG_STATE_HOME",
  "HOME",
  "LOCALAPPDATA",
] as const;

/** What `resolveDataDir()` decides from. */
export interface DataDirInputs {
  /** The value of `--data-dir`, if given. */
  flag?: string;
  /** Values of `DATA_DIR_ENV` (absent or empty means unset). */
  env: Partial<Record<typeof DATA_DIR_ENV[number], string>>;
  /** `Deno.build.os`. */
  os: typeof Deno.build.os;
  /** The caller's working directory: relative paths are the caller's. */
  cwd: string;
}

/**
 * The data directory, absolute: `--data-dir`, else `OMOTAI_DATA_DIR`, else the user state
 * directory (`$XDG_STATE_HOME/omotai` or `~/.local/state/omotai` on Linux and the BSDs,
 * `~/Library/Application Support/omotai` on macOS, `%LOCALAPPDATA%\omotai` on Windows).
 */
export function resolveDataDir(inputs: DataDirInputs): string {
  const given = nonEmpty(inputs.flag) ?? nonEmpty(inputs.env.OMOTAI_DATA_DIR);
  if (given !== undefined) return resolve(inputs.cwd, given);
  return stateDir(inputs);
}

function stateDir({ env, os }: DataDirInputs): string {
  if (os === "windows") {
    const local = nonEmpty(env.LOCALAPPDATA);
    if (local && isAbsolute(local)) return join(local, "omotai");
    throw new DataDirError("LOCALAPPDATA is not set: give --data-dir or OMOTAI_DATA_DIR");
  }
  const home = nonEmpty(env.HOME);
  if (os === "darwin") {
    if (home && isAbsolute(home)) return join(home, "Library", "Application Support", "omotai");
  } else {
    // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
    const xdg = nonEmpty(env.XDG_STATE_HOME);
    if (xdg && isAbsolute(xdg)) return join(xdg, "omotai");
    if (home && isAbsolute(home)) return join(home, ".local", "state", "omotai");
  }
  throw new DataDirError("HOME is not set (or not absolute): give --data-dir or OMOTAI_DATA_DIR");
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The data directory of a command: `flag` as given (relative paths stay relative to this
 * process's working directory, which the launcher keeps as the caller's), else
 * `resolveDataDir()` over this process's environment. The environment is read only when
 * `flag` is absent, so a child given `--data-dir` needs no environment permission for it.
 */
export function dataDirFrom(flag: string | undefined): string {
  if (flag !== undefined && flag !== "") return flag;
  const env: DataDirInputs["env"] = {};
  for (const name of DATA_DIR_ENV) env[name] = Deno.env.get(name);
  return resolveDataDir({ flag, env, os: Deno.build.os, cwd: Deno.cwd() });
}
