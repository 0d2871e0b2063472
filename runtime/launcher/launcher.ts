/**
 * The `omotai` command: a small launcher that reads its command line, works out what the
 * runtime may touch for it (`childPermissions()`), and runs the runtime in a child Deno
 * process granted exactly that. The launcher itself may read (the policy named on the
 * command line may be anywhere, and it cannot know where before it has read its arguments),
 * read the few variables in `LAUNCHER_ENV` and run Deno; it writes nothing, opens no socket
 * and never talks MCP: stdin, stdout and stderr are the child's.
 *
 * `omotai permissions COMMAND…` prints what the runtime would get for `omotai COMMAND…`.
 *
 * @module
 */
import { DATABASE_URL_ENV } from "./database_url.ts";
import { existsSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { CdpLayerError, findBrowser } from "../../cdp/mod.ts";
import { OmotaiError } from "../mod.ts";
import { BROWSER_USER, SYSTEMD_BOOTED, SYSTEMD_RUN_PATHS } from "../isolation/mod.ts";
import { parsePolicy } from "../policy/mod.ts";
import {
  childPermissions,
  type ChildPlan,
  LAUNCHER_ENV,
  type LauncherEnvName,
  type LaunchFacts,
} from "./permissions.ts";
import { listenForStop, StopRule } from "./stop_signals.ts";

/** The launcher's own permission flags, for the Deno at `deno` (tasks and the install). */
export function launcherFlags(deno: string): string[] {
  return ["--allow-read", `--allow-env=${LAUNCHER_ENV.join(",")}`, `--allow-run=${deno}`];
}

/** Where the runtime's pieces are. */
export interface LauncherLayout {
  /** The runtime's entry module, run in the child (runtime/cli/main.ts). */
  entry: URL;
}

const CHECKOUT = new URL("../../", import.meta.url);

/**
 * How Deno runs an npm-installed copy: its npm packages in Deno's own cache (`DENO_DIR`, under
 * the user's cache directory), not in a node_modules/ beside deno.json in npm's directory; and
 * fetched as the module graph needs them, so a first start downloads what the runtime imports,
 * not what only `policy build` does (the AssemblyScript compiler and its ~90 MB binaryen).
 * bin/omotai.mjs passes the same two.
 */
export const NPM_COPY_FLAGS: readonly string[] = [
  "--node-modules-dir=none",
  "--unstable-npm-lazy-caching",
];

/**
 * Whether this copy is one npm installed (`npx omotai`, bin/omotai.mjs): it then lies under a
 * node_modules/ directory, which npm owns (read-only for a global install, shared by every
 * npx run). The runtime is then run with `NPM_COPY_FLAGS`, as the package's bin runs the
 * launcher.
 */
export function installedByNpm(checkout: URL = CHECKOUT): boolean {
  return checkout.protocol === "file:" &&
    fileURLToPath(checkout).split(/[\\/]/).includes("node_modules");
}

/** The facts `childPermissions()` needs, looked up on this machine. */
export function localFacts(): LaunchFacts {
  const env: LaunchFacts["env"] = {};
  for (const name of LAUNCHER_ENV) {
    try {
      env[name as LauncherEnvName] = Deno.env.get(name);
    } catch {
      // An `omotai` installed before this variable was read lacks its permission: the
      // variable is then unset for it, as it was before (`deno task install` grants it).
    }
  }
  return {
    cwd: Deno.cwd(),
    os: Deno.build.os,
    deno: Deno.execPath(),
    bundledDir: localPath(new URL("policies-wasm/dist", CHECKOUT)),
    policiesDir: localPath(new URL("policies-wasm", CHECKOUT)),
    env,
    readPolicy(path) {
      try {
        return parsePolicy(Deno.readTextFileSync(path), path);
      } catch {
        // The runtime reads it again and reports what is wrong, with the file and line.
        return undefined;
      }
    },
    agentPolicies: agentPolicies,
    browser: (options) => findBrowser(env.OMOTAI_BROWSER, options),
    realPath(path) {
      try {
        return Deno.realPathSync(path);
      } catch {
        return undefined;
      }
    },
    systemdRun: Deno.build.os === "linux" ? localSystemdRun() : undefined,
  };
}

/** `systemd-run`, where systemd runs this host and it is installed. */
function localSystemdRun(): string | undefined {
  const there = (path: string) => {
    try {
      Deno.statSync(path);
      return true;
    } catch {
      return false;
    }
  };
  if (!there(SYSTEMD_BOOTED)) return undefined;
  return SYSTEMD_RUN_PATHS.find(there);
}

/**
 * The policy files of the agents in the database, read-only. A database that is not there
 * (or older than the agents table) has none; the runtime creates and migrates it.
 */
function agentPolicies(dbPath: string): string[] {
  if (!existsSync(dbPath)) return [];
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(dbPath, { readOnly: true });
    const rows = db.prepare("SELECT policy FROM agents WHERE policy IS NOT NULL").all();
    return rows.map((r) => String((r as { policy: string }).policy));
  } catch {
    return [];
  } finally {
    db?.close();
  }
}

function localPath(url: URL): string {
  if (url.protocol !== "file:") {
    throw new OmotaiError(
      "NOT_A_CHECKOUT",
      `the launcher runs from a local copy of omotai, not from ${url.href}`,
    );
  }
  return fileURLToPath(url);
}

/** The child's whole `deno` argument list for `plan`. */
export function childArgv(plan: ChildPlan, layout: LauncherLayout): string[] {
  const config = localPath(new URL("deno.json", CHECKOUT));
  return [
    "run",
    // A permission the launcher did not grant is refused, never asked for on a terminal.
    "--no-prompt",
    // The import map is the checkout's, wherever the caller stands.
    ...(existsSync(config) ? ["--config", config] : []),
    ...(installedByNpm() ? NPM_COPY_FLAGS : []),
    ...plan.flags,
    localPath(layout.entry),
    ...plan.args,
  ];
}

/** Runs `omotai ARGS`: the runtime in a child process with the permissions ARGS need. */
export async function launch(args: string[], layout: LauncherLayout): Promise<number> {
  const showOnly = args[0] === "permissions";
  let plan: ChildPlan;
  try {
    plan = childPermissions(showOnly ? args.slice(1) : args, localFacts());
  } catch (err) {
    if (err instanceof OmotaiError || err instanceof CdpLayerError) {
      console.error(`omotai: ${err.code}: ${err.message}`);
      return 1;
    }
    throw err;
  }
  const argv = childArgv(plan, layout);
  if (showOnly) {
    console.log(describe(plan, argv));
    return 0;
  }
  const child = new Deno.Command(Deno.execPath(), {
    args: argv,
    env: plan.env,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const stop = relaySignals(child, plan);
  try {
    const status = await child.status;
    return status.code;
  } finally {
    stop();
  }
}

/**
 * Passes stop signals on to the runtime by the rule of `stop_signals.ts`: the first stop
 * once, a repeat within the grace period never (the runtime has it already, or will ignore
 * it), a forcing one after it. In stdio mode it also ends the runtime when the launcher's own
 * parent (the client) is gone: the runtime watches its parent, which is this process.
 * From a terminal, Ctrl+C and a hangup reach the runtime directly (same process group), so
 * they are not passed on, but they count as the stop. Either way the launcher waits for the
 * runtime's exit and exits with its code.
 */
function relaySignals(child: Deno.ChildProcess, plan: ChildPlan): () => void {
  const fromTerminal = Deno.stdin.isTerminal();
  const rule = new StopRule();
  const listening = listenForStop(rule, (verdict) => {
    if (verdict.kind === "repeat") return;
    const direct = fromTerminal && verdict.signal !== "SIGTERM";
    if (!direct) kill(child, verdict.signal);
  });
  let timer: ReturnType<typeof setInterval> | undefined;
  const stdio = plan.line?.command === "start" && plan.line.values.mode !== "sse";
  if (stdio) {
    const parent = Deno.ppid;
    const watch = setInterval(() => {
      if (Deno.ppid === parent) return;
      clearInterval(watch);
      // A stop already passed on is not repeated (a late repeat would force the exit).
      if (rule.stopping) return;
      rule.judge("SIGTERM");
      kill(child, "SIGTERM");
    }, 1_000);
    Deno.unrefTimer(watch);
    timer = watch;
  }
  return () => {
    clearInterval(timer);
    listening[Symbol.dispose]();
  };
}

function kill(child: Deno.ChildProcess, signal: Deno.Signal): void {
  try {
    child.kill(signal);
  } catch {
    // Already gone.
  }
}

/** What `omotai permissions …` prints: each process and its permissions. */
/** A database URL as it may be shown: its password replaced. */
function maskPassword(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "****";
    return u.href;
  } catch {
    return "****";
  }
}

function describe(plan: ChildPlan, argv: string[]): string {
  const lines = [
    `launcher: ${Deno.execPath()} run ${
      [...(installedByNpm() ? NPM_COPY_FLAGS : []), ...launcherFlags(Deno.execPath())].join(" ")
    } (omotai)`,
    `runtime:  ${Deno.execPath()} ${argv.join(" ")}`,
  ];
  for (const [name, value] of Object.entries(plan.env)) {
    lines.push(`  with ${name}=${name === DATABASE_URL_ENV ? maskPassword(value) : value}`);
  }
  if (plan.line?.command === "start") {
    const off = plan.line.values.isolation === "off";
    const user = plan.line.values["browser-user"] ?? BROWSER_USER;
    lines.push(
      `egress proxy: ${Deno.execPath()} run --allow-net${
        off ? "" : ", read and write of its socket directory under the data dir"
      } (spawned by the runtime)`,
      `browser: ${plan.env.OMOTAI_BROWSER} (not a Deno process: a minimal environment, its own profile, CDP over a pipe)`,
      off
        ? "browser isolation: off (--isolation off): the browser shares the runtime's network"
        : `browser isolation: each browser in a network namespace of its own (bubblewrap), reaching only the egress proxy (socat); as root, user ${user} with Chromium's sandbox. Where this machine cannot, the start says why and runs without (a policy's require_isolation refuses instead)`,
    );
    if (!off) {
      lines.push(
        "browser cgroup: each browser in a group of its own (cgroup v2 under a delegated subtree, or v1 on a hybrid host; through /bin/sh, as Deno reaches /sys only with --allow-all): its memory without swap (limits.browser_memory_mb; default from the machine's memory and --max-sessions), its pids and a CPU weight below the runtime's, enforced by the kernel. The start says which, or why none",
      );
      if (plan.flags.some((f) => f.startsWith("--allow-run=") && f.includes("/systemd-run"))) {
        lines.push(
          "systemd runs this host: where it delegates no cgroup2 subtree to the runtime, each browser starts under systemd-run --scope (granted for that), a scope with those bounds as unit properties",
        );
      }
    }
  }
  return lines.join("\n");
}
