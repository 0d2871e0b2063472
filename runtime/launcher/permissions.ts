/**
 * The permissions of the runtime's process, worked out from its command line: read of the
 * policy files and the modules and upload directory they name, of the data directory and of
 * the bundled modules; write of the data directory; run of the browser and of Deno (the
 * egress proxy child); net of the addresses it listens on; the environment variables it
 * reads. Nothing here touches the system: what must be looked at (a policy's contents, the
 * agents in the database, which browser exists) comes in as `LaunchFacts`, so one command
 * line always gives the same flags and the tests can say exactly which.
 *
 * @module
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { FindBrowserOptions } from "../../cdp/mod.ts";
import { DETECT_READS, ENTER_SHELL, NICE_PATHS, TOOL_DIRS } from "../isolation/mod.ts";
import { DATA_DIR_ENV, resolveDataDir } from "./data_dir.ts";

import {
  type CommandLine,
  DATA_DIR_COMMANDS,
  type OptionValues,
  parseCommandLine,
} from "./options.ts";

import { DATABASE_URL_ENV, databaseAddress, PG_CLIENT_ENV } from "./database_url.ts";
import { evalGrants } from "./eval_permissions.ts";
import { Grants, optionString, optionStrings } from "./permission_grants.ts";

/** What a policy file names that the runtime will read. */
export interface PolicyRefs {
  modules?: readonly { path: string }[];
  upload_dir?: string;
  /** A pinned browser is read (hashed) by the runtime. */
  browser_sha256?: string;
}

/**
 * Variables the launcher itself reads (to find the data dir, the database, the browser). The
 * npm package's bin/omotai.mjs, plain JavaScript, reads them as data from
 * bin/launcher_env.json (tests/npm_package_test.ts fails when the two differ).
 */
export const LAUNCHER_ENV = [
  ...DATA_DIR_ENV,
  "OMOTAI_BROWSER",
  // A window needs a full browser, not the headless shell.
  "OMOTAI_HEADFUL",
  // `--browser-sha256`'s default: a pinned browser's file is granted for reading (hashing).
  "OMOTAI_BROWSER_SHA256",
  "OMOTAI_DB",
  // The shared database (`--database`'s default): its host and port are granted.
  "OMOTAI_DATABASE_URL",
  "TMPDIR",
  // The YAML parser looks at these while it reads a policy file.
  "LOG_TOKENS",
  "LOG_STREAM",
] as const;

/** Names of the variables the launcher reads. */
export type LauncherEnvName = typeof LAUNCHER_ENV[number];

/** What the flags depend on besides the command line. */
export interface LaunchFacts {
  /** The caller's working directory (the child keeps it). */
  cwd: string;
  os: typeof Deno.build.os;
  /** The Deno that runs the child, and that the child runs for the egress proxy. */
  deno: string;
  /** The bundled policy modules (`bundled:NAME` is `NAME.wasm` there). */
  bundledDir: string;
  /** policies-wasm/ of the checkout (sources and compiler library of `policy build`). */
  policiesDir: string;
  env: Partial<Record<LauncherEnvName, string>>;
  /** The policy at `path`, or undefined when it cannot be read or parsed (the runtime says why). */
  readPolicy(path: string): PolicyRefs | undefined;
  /** Absolute policy files of the agents in the database at `dbPath` (none without one). */
  agentPolicies(dbPath: string): string[];
  /**
   * The browser the runtime would start, `OMOTAI_BROWSER` first, picked as `findBrowser()`
   * picks with `options`; throws when there is none.
   */
  browser(options: FindBrowserOptions): string;
  /** The real path of a directory, or undefined if it has none. */
  realPath(path: string): string | undefined;
  /**
   * `systemd-run` where systemd runs this host (`/run/systemd/system` exists) and it is
   * installed (`SYSTEMD_RUN_PATHS`); undefined elsewhere.
   */
  systemdRun?: string;
}

/** The runtime process: its permission flags, arguments and the variables set for it. */
export interface ChildPlan {
  /** `--allow-*` flags, in a fixed order: read, write, net, env, run, sys. */
  flags: string[];
  /** The command line, with `--data-dir` made explicit where the command keeps state. */
  args: string[];
  /** Set on top of the inherited environment. */
  env: Record<string, string>;
  /** The parsed command line (undefined when it did not parse: the runtime reports that). */
  line?: CommandLine;
}

/** Variables every command may read: the database's path and the YAML parser's switches. */
const BASE_ENV = ["OMOTAI_DB", "LOG_TOKENS", "LOG_STREAM"];
const VAULT_ENV = ["OMOTAI_VAULT_KEY", "OMOTAI_VAULT_PASSPHRASE"];

/** The variables each command reads. */
export const CHILD_ENV: Readonly<Record<string, readonly string[]>> = {
  start: [
    ...BASE_ENV,
    "OMOTAI_BROWSER",
    "OMOTAI_HEADFUL",
    "OMOTAI_BROWSER_SHA256",
    "OMOTAI_ADMIN_TOKEN",
    DATABASE_URL_ENV,
    ...VAULT_ENV,
    // node:child_process (Chromium is spawned with it) looks at this one.
    "NODE_V8_COVERAGE",
  ],
  agent: [...BASE_ENV, DATABASE_URL_ENV],
  domain: [...BASE_ENV, DATABASE_URL_ENV],
  audit: [...BASE_ENV, DATABASE_URL_ENV],
  tenant: [...BASE_ENV, DATABASE_URL_ENV],
  grant: [...BASE_ENV, DATABASE_URL_ENV],
  secret: [...BASE_ENV, DATABASE_URL_ENV, ...VAULT_ENV],
  vault: [...BASE_ENV, ...VAULT_ENV, "OMOTAI_VAULT_NEW_KEY", "OMOTAI_VAULT_NEW_PASSPHRASE"],
  policy: ["LOG_TOKENS", "LOG_STREAM"],
  // The eval starts its Omotai arm as the launcher starts `omotai start`, with the launcher's
  // own code (`localFacts()` reads every LAUNCHER_ENV variable); PATH finds an arm's program;
  // OMOTAI_EVAL_API_KEY is the OpenAI-compatible endpoint's key, and node:child_process (cdp/
  // spawns Chromium with it) looks at NODE_V8_COVERAGE.
  // The MCP SDK's stdio client reads HOME, LOGNAME, PATH, SHELL, TERM and USER to hand an
  // arm the usual environment, and its cross-spawn/which read OSTYPE and PATHEXT on load.
  eval: [
    ...LAUNCHER_ENV,
    "PATH",
    "LOGNAME",
    "SHELL",
    "TERM",
    "USER",
    "OSTYPE",
    "PATHEXT",
    "OMOTAI_EVAL_API_KEY",
    "NODE_V8_COVERAGE",
  ],
};

/** The commands that take `--database URL`. */
const DATABASE_COMMANDS = new Set([
  "start",
  "agent",
  "audit",
  "tenant",
  "domain",
  "grant",
  "secret",
]);

/** Rotated files of a JSONL audit mirror next to the live one (runtime/audit/jsonl_mirror.ts). */
const MIRROR_KEEP = 5;

/**
 * The runtime's permissions for `args` (the command line after `omotai`). A command line that
 * does not parse gets no permission at all: the runtime then prints the same usage error it
 * always did.
 */
export function childPermissions(args: readonly string[], facts: LaunchFacts): ChildPlan {
  let line: CommandLine;
  try {
    line = parseCommandLine(args);
  } catch (err) {
    if (err instanceof TypeError) return { flags: [], args: [...args], env: {} };
    throw err;
  }
  const grants = new Grants();
  const childEnv: Record<string, string> = {};
  const abs = (p: string) => resolve(facts.cwd, p);
  let childArgs = [...args];
  const { command, values } = line;
  for (const name of (command && CHILD_ENV[command]) ?? []) grants.env.add(name);

  if (command === "start" || (command !== undefined && Object.hasOwn(DATA_DIR_COMMANDS, command))) {
    const flag = optionString(values, "data-dir");
    const dataDir = resolveDataDir({ flag, env: facts.env, os: facts.os, cwd: facts.cwd });
    if (flag === undefined) childArgs = withDataDir(args, command === "start", dataDir);
    const db = databaseFile(dataDir, facts);
    grants.read.add(dataDir);
    grants.write.add(dataDir);
    // The database's own files, when OMOTAI_DB puts it outside the data dir.
    if (dirname(db) !== dataDir) {
      for (const f of [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]) {
        grants.read.add(f);
        grants.write.add(f);
      }
    }
    if (command === "start") {
      startGrants(line, grants, childEnv, db, facts);
      databaseGrant(values, grants, facts);
    }
  }

  switch (command) {
    case "agent": {
      // `agent add --policy FILE` checks that the file is there and readable.
      const policy = optionString(values, "policy");
      if (policy !== undefined) grants.read.add(abs(policy));
      databaseGrant(values, grants, facts);
      break;
    }
    case "audit": {
      const jsonl = optionString(values, "jsonl");
      if (jsonl !== undefined) { for (const f of mirrorFiles(abs(jsonl))) grants.read.add(f); }
      for (
        const file of [
          ...optionStrings(values, "checkpoints"),
          ...optionStrings(values, "checkpoint-key"),
        ]
      ) {
        grants.read.add(abs(file));
      }
      databaseGrant(values, grants, facts);
      break;
    }
    case "tenant":
    case "domain":
    case "grant":
    case "secret":
      databaseGrant(values, grants, facts);
      break;
    case "policy":
      policyGrants(line, grants, facts);
      break;
    case "eval":
      evalGrants(values, grants, childEnv, facts);
      break;
  }
  // A database URL holds a password: it reaches the runtime through its environment, not
  // its argv (which every local user can read in /proc).
  const url = optionString(values, "database");
  if (url !== undefined && command !== undefined && DATABASE_COMMANDS.has(command)) {
    childArgs = withoutOption(childArgs, "database");
    childEnv[DATABASE_URL_ENV] = url;
  }
  return { flags: grants.flags(), args: childArgs, env: childEnv, line };
}

/** `args` without `--NAME VALUE` and `--NAME=VALUE`. */
function withoutOption(args: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}`) {
      i++;
      continue;
    }
    if (args[i].startsWith(`--${name}=`)) continue;
    out.push(args[i]);
  }
  return out;
}

/** The shared database's address (`--database`, else `OMOTAI_DATABASE_URL`), if one is named. */
function databaseGrant(values: OptionValues, grants: Grants, facts: LaunchFacts): void {
  const url = optionString(values, "database") ?? facts.env[DATABASE_URL_ENV];
  const address = url ? databaseAddress(url) : undefined;
  if (!address) return;
  grants.net.add(address);
  for (const name of PG_CLIENT_ENV) grants.env.add(name);
}

function startGrants(
  line: CommandLine,
  grants: Grants,
  childEnv: Record<string, string>,
  db: string,
  facts: LaunchFacts,
): void {
  const { values } = line;
  const abs = (p: string) => resolve(facts.cwd, p);
  grants.read.add(facts.bundledDir);
  const policy = optionString(values, "policy");
  if (policy !== undefined) policyFileGrants(abs(policy), grants, facts);
  const mode = optionString(values, "mode");
  // Agents added with --policy FILE browse under their own policy, which the runtime reads
  // when such an agent connects; only the sse door knows agents.
  if (mode === "sse") {
    for (const p of facts.agentPolicies(db)) policyFileGrants(p, grants, facts);
  }
  const audit = optionString(values, "audit");
  if (audit !== undefined) {
    for (const f of mirrorFiles(abs(audit))) {
      grants.read.add(f);
      grants.write.add(f);
    }
  }
  const host = optionString(values, "host") ?? "127.0.0.1";
  const port = optionString(values, "port") ?? "8080";
  const at = (h: string, p: string) => `${h.includes(":") ? `[${h}]` : h}:${p}`;
  if (mode === "sse") grants.net.add(at(host, port));
  else if (values.console === true) {
    grants.net.add(at(host, optionString(values, "console-port") ?? "8090"));
  }
  if (values["demo-site"] === true) {
    // The demo shop listens beside the runtime: --demo-port, else the port after --port.
    const demoPort = optionString(values, "demo-port") ?? String(Number(port) + 1);
    grants.net.add(`127.0.0.1:${demoPort}`);
  }
  const browser = facts.browser({
    headful: values.headful === true || facts.env.OMOTAI_HEADFUL === "1",
  });
  // The runtime is handed the browser granted here, not left to pick one it may not run.
  childEnv.OMOTAI_BROWSER = browser;
  grants.run.add(browser);
  // A pinned browser is hashed, the file its symlinks lead to (launcher/browser_pin.ts).
  const pinned = optionString(values, "browser-sha256") !== undefined ||
    Boolean(facts.env.OMOTAI_BROWSER_SHA256) ||
    (policy !== undefined && facts.readPolicy(abs(policy))?.browser_sha256 !== undefined);
  if (pinned) {
    grants.read.add(browser);
    const real = facts.realPath(browser);
    if (real !== undefined) grants.read.add(real);
  }
  grants.run.add(facts.deno);
  // Browsers run at a lower CPU priority than the runtime (cli/browser_start.ts).
  for (const p of NICE_PATHS) {
    grants.read.add(p);
    grants.run.add(p);
  }
  // Deno wants --allow-all for any file under /sys or /proc/<pid>, so what the runtime reads
  // and writes there goes through one POSIX shell (runtime/isolation/cgroup_shell.ts): a hung
  // tab's renderer found by its host pid and killed (runtime/browser/renderer_pids.ts), and
  // below, each browser's cgroup. It can run nothing that nice, granted above, could not.
  if (facts.os === "linux") grants.run.add(ENTER_SHELL);
  // Chromium's sandbox cannot start as root: the runtime asks for its uid to know.
  grants.sys.add("uid");
  // The session cap's default is read from the machine's memory.
  grants.sys.add("systemMemoryInfo");
  // Each browser in its own network namespace (runtime/isolation/): the runtime looks for
  // bubblewrap, socat, setpriv and the browser's user, and runs bubblewrap (which runs the
  // rest; the egress proxy's socket directory is inside the data dir). `--isolation off`
  // looks for none of it.
  if (facts.os === "linux" && optionString(values, "isolation") !== "off") {
    for (const p of DETECT_READS) grants.read.add(p);
    for (const dir of TOOL_DIRS) grants.run.add(`${dir}/bwrap`);
    // A cgroup per browser (runtime/isolation/cgroup.ts): made and read through that shell,
    // which also enters each browser's group and execs the rest. Where systemd runs the host,
    // systemd may have to make the group (a scope per browser, runtime/isolation/
    // systemd_scope.ts): its systemd-run is granted there and nowhere else. Which backend is
    // chosen needs /proc/self (beyond the launcher's reach), so the runtime decides.
    if (facts.systemdRun !== undefined) grants.run.add(facts.systemdRun);
  }
}

/** Read of a policy file, the modules it names (and their signatures) and its upload_dir. */
function policyFileGrants(path: string, grants: Grants, facts: LaunchFacts): void {
  grants.read.add(path);
  const policy = facts.readPolicy(path);
  if (!policy) return;
  for (const { path: entry } of policy.modules ?? []) {
    // bundled: modules are read from the bundled dir, granted as a whole.
    if (entry.startsWith("bundled:")) continue;
    // runtime/policy/loader.ts: relative to the policy file's directory.
    const file = isAbsolute(entry) ? entry : join(dirname(path), entry);
    grants.read.add(file);
    grants.read.add(`${file}.sig.json`);
  }
  if (policy.upload_dir !== undefined) {
    grants.read.add(policy.upload_dir);
    // Uploads are checked against the directory's real path (runtime/tools/upload_paths.ts).
    const real = facts.realPath(policy.upload_dir);
    if (real !== undefined) grants.read.add(real);
  }
}

function policyGrants(line: CommandLine, grants: Grants, facts: LaunchFacts): void {
  const { sub, values, positionals } = line;
  const abs = (p: string) => resolve(facts.cwd, p);
  const wasm = positionals[0] !== undefined ? abs(positionals[0]) : undefined;
  switch (sub) {
    case "keygen": {
      const out = optionString(values, "out");
      if (out !== undefined) grants.write.add(abs(out));
      break;
    }
    case "sign": {
      const key = optionString(values, "key");
      if (key !== undefined) grants.read.add(abs(key));
      if (wasm !== undefined) {
        grants.read.add(wasm);
        grants.write.add(`${wasm}.sig.json`);
      }
      break;
    }
    case "verify": {
      if (wasm !== undefined) grants.read.add(wasm).add(`${wasm}.sig.json`);
      const policy = optionString(values, "policy");
      if (policy !== undefined) grants.read.add(abs(policy));
      databaseGrant(values, grants, facts);
      break;
    }
    case "test":
      for (const p of positionals.slice(0, 2)) grants.read.add(abs(p));
      break;
    case "build": {
      // The AssemblyScript compiler runs as a Deno child of its own (policies-wasm/build.ts):
      // a developer's command, as `deno task build:policies` is.
      grants.read.add(facts.policiesDir);
      const key = optionString(values, "sign");
      if (key !== undefined) grants.read.add(abs(key));
      const out = optionString(values, "out");
      const outDir = out !== undefined ? abs(out) : join(facts.policiesDir, "dist");
      grants.read.add(outDir);
      grants.write.add(outDir);
      grants.write.add(tempDir(facts));
      grants.run.add(facts.deno);
      break;
    }
  }
}

/** runtime/store/database.ts: `OMOTAI_DB`, else `<dataDir>/omotai.db`. */
function databaseFile(dataDir: string, facts: LaunchFacts): string {
  const db = facts.env.OMOTAI_DB;
  return db ? resolve(facts.cwd, db) : join(dataDir, "omotai.db");
}

function mirrorFiles(path: string): string[] {
  return [path, ...Array.from({ length: MIRROR_KEEP }, (_, i) => `${path}.${i + 1}`)];
}

/** Where `Deno.makeTempFile()` writes on Unix (the compiler's output goes there first). */
function tempDir(facts: LaunchFacts): string {
  return facts.env.TMPDIR || "/tmp";
}

/**
 * `args` with `--data-dir DIR` right after the command (and its subcommand), before any
 * `--` that would turn it into a positional.
 */
function withDataDir(args: readonly string[], isStart: boolean, dataDir: string): string[] {
  const at = isStart ? 1 : Math.min(2, args.length);
  return [...args.slice(0, at), "--data-dir", dataDir, ...args.slice(at)];
}
