/**
 * The option tables of every `omotai` command, in one place: the runtime's commands parse
 * with them and the launcher reads the same command line with them to work out what the
 * runtime may touch. One table means the launcher can never read a path out of a command
 * line differently from the command that uses it.
 *
 * @module
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** `omotai start`. */
export const START_OPTIONS = {
  mode: { type: "string", default: "stdio" },
  policy: { type: "string" },
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "8080" },
  "data-dir": { type: "string" },
  audit: { type: "string" },
  "demo-site": { type: "boolean", default: false },
  "demo-port": { type: "string" },
  headful: { type: "boolean", default: false },
  "idle-timeout": { type: "string", default: "1800" },
  console: { type: "boolean", default: false },
  "console-port": { type: "string", default: "8090" },
  isolation: { type: "string", default: "auto" },
  "browser-user": { type: "string" },
  "warm-browsers": { type: "string" },
  "max-sessions": { type: "string" },
  database: { type: "string" },
  tenant: { type: "string" },
  "public-host": { type: "string", multiple: true },
  "browser-sha256": { type: "string" },
} as const satisfies Options;

/** `omotai agent add|list|rm`. */
export const AGENT_OPTIONS = {
  policy: { type: "string" },
  "data-dir": { type: "string" },
  database: { type: "string" },
  tenant: { type: "string" },
} as const satisfies Options;

/** `omotai domain add|rm|list`. */
export const DOMAIN_OPTIONS = {
  allow: { type: "boolean", default: false },
  deny: { type: "boolean", default: false },
  "data-dir": { type: "string" },
  database: { type: "string" },
  tenant: { type: "string" },
} as const satisfies Options;

/** `omotai audit verify|prune`. */
export const AUDIT_OPTIONS = {
  jsonl: { type: "string" },
  "older-than": { type: "string" },
  "data-dir": { type: "string" },
  checkpoints: { type: "string", multiple: true },
  "checkpoint-key": { type: "string", multiple: true },
  database: { type: "string" },
  tenant: { type: "string" },
} as const satisfies Options;

/**
 * The options of `omotai audit` that take several words after one flag: `--checkpoints A B`
 * is `--checkpoints A --checkpoints B` (one file per runtime of a tenant, each with its key).
 */
export const AUDIT_LIST_OPTIONS = ["checkpoints", "checkpoint-key"] as const;

/**
 * `args` with every word after a flag of `lists` (up to the next option or `--`) given that
 * flag again, so `parseArgs` reads `--checkpoints A B` as two values, not a stray positional.
 */
export function spreadLists(args: readonly string[], lists: readonly string[]): string[] {
  const out: string[] = [];
  // The list flag whose values follow, and whether its first value is still to come
  // (`--checkpoints A`, where parseArgs takes A itself; not `--checkpoints=A`).
  let flag: string | undefined;
  let first = false;
  for (const [i, word] of args.entries()) {
    if (word === "--") return [...out, ...args.slice(i)];
    if (word.startsWith("-")) {
      const name = word.startsWith("--") ? word.slice(2).split("=")[0] : "";
      flag = lists.includes(name) ? `--${name}` : undefined;
      first = flag !== undefined && !word.includes("=");
      out.push(word);
    } else if (flag && !first) out.push(flag, word);
    else {
      out.push(word);
      first = false;
    }
  }
  return out;
}

/** `omotai tenant add|list` (PostgreSQL only, with the tables' owner's URL). */
export const TENANT_OPTIONS = {
  database: { type: "string" },
} as const satisfies Options;

/** `omotai secret add|rm|list`. */
export const SECRET_OPTIONS = {
  kind: { type: "string" },
  "data-dir": { type: "string" },
  database: { type: "string" },
  tenant: { type: "string" },
} as const satisfies Options;

/** `omotai vault rekey`. */
export const VAULT_OPTIONS = {
  "data-dir": { type: "string" },
} as const satisfies Options;

/** `omotai grant add|approve|rm|list`. */
export const GRANT_OPTIONS = {
  agent: { type: "string" },
  purpose: { type: "string" },
  mode: { type: "string" },
  expires: { type: "string" },
  fill: { type: "string", multiple: true },
  capture: { type: "string", multiple: true },
  workflow: { type: "string" },
  output: { type: "string" },
  approve: { type: "boolean" },
  "data-dir": { type: "string" },
  database: { type: "string" },
  tenant: { type: "string" },
} as const satisfies Options;

/** `omotai policy keygen`. */
export const POLICY_KEYGEN_OPTIONS = { out: { type: "string" } } as const satisfies Options;

/** `omotai policy sign`. */
export const POLICY_SIGN_OPTIONS = {
  key: { type: "string" },
  name: { type: "string" },
  version: { type: "string" },
  kind: { type: "string", default: "rule" },
} as const satisfies Options;

/** `omotai policy verify`. */
export const POLICY_VERIFY_OPTIONS = {
  key: { type: "string" },
  policy: { type: "string" },
} as const satisfies Options;

/**
 * `omotai policy build`: policies-wasm/build.ts parses these itself (it is also run alone as
 * `deno task build:policies`); `--out` defaults to `policies-wasm/dist` there.
 */
export const POLICY_BUILD_OPTIONS = {
  sign: { type: "string" },
  out: { type: "string" },
} as const satisfies Options;

/**
 * `omotai eval`: the Omotai arm (unless `--no-omotai`) and each `--arm NAME=COMMAND` (a stdio
 * MCP server) run the same cases; the report goes to `--out`, the working files to
 * `<out>/.work`.
 */
export const EVAL_OPTIONS = {
  policy: { type: "string" },
  arm: { type: "string", multiple: true },
  only: { type: "string" },
  out: { type: "string", default: "omotai-eval" },
  agent: { type: "string", default: "scripted" },
  model: { type: "string" },
  "no-omotai": { type: "boolean", default: false },
  concurrency: { type: "string", default: "1" },
} as const satisfies Options;

/** The commands that keep state in a data directory, with their option tables. */
export const DATA_DIR_COMMANDS = {
  agent: AGENT_OPTIONS,
  domain: DOMAIN_OPTIONS,
  audit: AUDIT_OPTIONS,
  secret: SECRET_OPTIONS,
  vault: VAULT_OPTIONS,
  grant: GRANT_OPTIONS,
} as const;

/** Option values as `parseArgs` returns them. */
export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/** A command line read the way its command reads it. */
export interface CommandLine {
  /** `start`, `agent`, …; undefined for no arguments. */
  command: string | undefined;
  /** The subcommand (`add`, `sign`, …) of commands that have one. */
  sub?: string;
  values: OptionValues;
  positionals: string[];
}

/**
 * Reads `args` as the command they name reads them (strictly: an unknown option throws the
 * same `TypeError` the command would). Commands without options here (`help`, an unknown
 * word) come back with no values.
 */
export function parseCommandLine(args: readonly string[]): CommandLine {
  const [command, ...rest] = args;
  if (command === "start") return { command, ...read(rest, START_OPTIONS, false) };
  if (command === "eval") return { command, ...read(rest, EVAL_OPTIONS, false) };
  if (command !== undefined && Object.hasOwn(DATA_DIR_COMMANDS, command)) {
    const [sub, ...more] = rest;
    const options = DATA_DIR_COMMANDS[command as keyof typeof DATA_DIR_COMMANDS];
    const words = command === "audit" ? spreadLists(more, AUDIT_LIST_OPTIONS) : more;
    return { command, sub, ...read(words, options, true) };
  }
  if (command === "tenant") {
    const [sub, ...more] = rest;
    return { command, sub, ...read(more, TENANT_OPTIONS, true) };
  }
  if (command === "policy") {
    const [sub, ...more] = rest;
    switch (sub) {
      case "keygen":
        return { command, sub, ...read(more, POLICY_KEYGEN_OPTIONS, false) };
      case "sign":
        return { command, sub, ...read(more, POLICY_SIGN_OPTIONS, true) };
      case "verify":
        return { command, sub, ...read(more, POLICY_VERIFY_OPTIONS, true) };
      case "build":
        return { command, sub, ...read(more, POLICY_BUILD_OPTIONS, false) };
      default:
        // `test` takes its two files as plain words.
        return { command, sub, values: {}, positionals: more };
    }
  }
  return { command, values: {}, positionals: rest };
}

function read(
  args: readonly string[],
  options: Options,
  allowPositionals: boolean,
): { values: OptionValues; positionals: string[] } {
  const { values, positionals } = parseArgs({
    args: [...args],
    options,
    allowPositionals,
    strict: true,
  });
  return { values: values as OptionValues, positionals };
}
