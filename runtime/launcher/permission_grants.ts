/**
 * The Deno permissions one process is given, collected kind by kind while a command line is
 * read (`permissions.ts`) and written out as `--allow-*` flags; and the reads of the parsed
 * option values every grant goes by.
 *
 * @module
 */
import { OmotaiError } from "../mod.ts";
import type { OptionValues } from "./options.ts";

/** A path the launcher cannot put into a Deno permission flag. */
export class LaunchError extends OmotaiError<"PATH_NOT_GRANTABLE"> {}

/** What one process may read, write, reach, see and run, as sets (no value twice). */
export class Grants {
  /** Paths for `--allow-read`. */
  read: Set<string> = new Set<string>();
  /** Paths for `--allow-write`. */
  write: Set<string> = new Set<string>();
  /** `host[:port]` for `--allow-net`. */
  net: Set<string> = new Set<string>();
  /** Variable names for `--allow-env`. */
  env: Set<string> = new Set<string>();
  /** Programs for `--allow-run`. */
  run: Set<string> = new Set<string>();
  /** System information for `--allow-sys`. */
  sys: Set<string> = new Set<string>();

  /**
   * `--allow-*` flags in a fixed order (read, write, net, env, run, sys), none for an empty
   * kind; throws `PATH_NOT_GRANTABLE` for a value holding a comma.
   */
  flags(): string[] {
    const out: string[] = [];
    for (const kind of ["read", "write", "net", "env", "run", "sys"] as const) {
      const values = [...this[kind]];
      if (values.length === 0) continue;
      for (const v of values) {
        // Deno splits a flag's list on commas and has no escape for one.
        if (v.includes(",")) {
          throw new LaunchError(
            "PATH_NOT_GRANTABLE",
            `${v} holds a comma, which a Deno permission flag cannot carry: move or rename it`,
          );
        }
      }
      out.push(`--allow-${kind}=${values.join(",")}`);
    }
    return out;
  }
}

/** The option `key` when it holds a string, else undefined. */
export function optionString(values: OptionValues, key: string): string | undefined {
  const v = values[key];
  return typeof v === "string" ? v : undefined;
}

/** The strings of a repeatable option `key` (none when it is absent). */
export function optionStrings(values: OptionValues, key: string): string[] {
  const v = values[key];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}
