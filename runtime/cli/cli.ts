/**
 * The `omotai` command line.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { CdpLayerError } from "../../cdp/mod.ts";
import { VaultError } from "../../vault/mod.ts";
import { OmotaiError, VERSION } from "../mod.ts";
import {
  databaseUrl,
  dataDirFrom,
  type PinSource,
  SHA256_HEX,
  START_OPTIONS,
} from "../launcher/mod.ts";
import type { Runtime, StartOptions } from "./start.ts";

const USAGE = `omotai ${VERSION}: a security runtime between an AI agent and a real browser

Usage:
  omotai start [--mode stdio|sse] [--policy FILE] [--host 127.0.0.1] [--port 8080]
               [--data-dir DIR] [--audit FILE.jsonl] [--demo-site] [--demo-port PORT]
               [--headful] [--idle-timeout SECONDS] [--console] [--console-port 8090]
               [--isolation auto|off] [--browser-user NAME] [--warm-browsers N]
               [--max-sessions N] [--database URL --tenant ID]
               [--public-host HOST:PORT ...] [--browser-sha256 HEX]
  omotai policy keygen|sign|verify|test|build ...
  omotai domain add ORIGIN --allow|--deny | rm ORIGIN | list
               [--data-dir DIR | --database URL --tenant ID]
  omotai agent add NAME [--policy FILE] | rm NAME | list
               [--data-dir DIR | --database URL --tenant ID]
  omotai audit verify [--jsonl FILE] [--checkpoints FILE... [--checkpoint-key PUB...]]
               | prune --older-than 90d   [--data-dir DIR | --database URL --tenant ID]
  omotai tenant add ID | token ID | bind ID ROLE | list         --database URL
  omotai secret add ID --kind password|username|totp|generic | rm ID | list
               [--data-dir DIR | --database URL --tenant ID]
  omotai vault rekey                                            [--data-dir DIR]
  omotai grant add SECRET_ID --agent NAME --purpose TEXT --mode once|session|standing
               [--expires 24h|ISO] --fill ORIGIN[,ORIGIN] | --capture ORIGIN[,ORIGIN]
               [--approve] | approve ID | rm ID | list
               [--data-dir DIR | --database URL --tenant ID]
  omotai eval [--policy FILE] [--arm NAME=COMMAND]... [--only CASES] [--out DIR]
               [--agent scripted|openai:URL --model NAME] [--no-omotai] [--concurrency N]
  omotai permissions COMMAND ...
  omotai --version
  omotai help

start     Serve the browser tools over MCP. stdio (default) is for clients that spawn
          the runtime; sse serves legacy SSE (/sse) and Streamable HTTP (/mcp).
          Ends, closing every browser, when stdin closes or the parent process dies
          (stdio), or on SIGTERM, SIGINT or SIGHUP. --idle-timeout (sse, default 1800)
          closes a Streamable HTTP session that sent nothing for that many seconds.
          Each browser runs in a network namespace of its own that reaches nothing
          but the egress proxy (--isolation auto, the default, where the machine
          allows; off: without); as root, as an unprivileged user (--browser-user,
          default omotai-browser) with Chromium's sandbox on. --warm-browsers keeps
          N browsers started ahead of their sessions, each a fresh profile used by one
          session only (default: 1, 2 from 8 cores; 0: none; stdio: the first only).
          --max-sessions caps the sessions held at once (sse; default: what the
          machine's memory holds at 256 MiB each); one more gets 503 SERVER_BUSY with
          Retry-After, so a load balancer can send it to another runtime. One agent
          holds at most its policy's max_sessions, by default half the cap rounded
          up; past it that agent alone gets 503 AGENT_BUSY with Retry-After.
          --browser-sha256 (or the policy's browser_sha256) pins the browser binary:
          another build is refused (BROWSER_PIN_MISMATCH, naming its hash).
policy    Build, sign, verify and test policy modules.
domain    Allow or deny origins while the runtime runs (applies to the next action).
agent     Give an agent its own key (printed once, on the last line) or take it away.
audit     Check the audit chain (and hold it against the runtime's signed checkpoints,
          which catch a history rewritten by whoever holds the database), or prune old
          rows keeping it verifiable. --database (or OMOTAI_DATABASE_URL) checks one
          tenant's chain in a shared PostgreSQL store.
tenant    Add or list the tenants of a shared PostgreSQL store (the owner's URL).
secret    Keep credentials in the encrypted vault. add reads the value from stdin
          (never from argv) and no command prints it. The vault key comes from
          OMOTAI_VAULT_KEY (32 bytes, base64) or OMOTAI_VAULT_PASSPHRASE.
vault     rekey re-seals every secret under OMOTAI_VAULT_NEW_KEY or
          OMOTAI_VAULT_NEW_PASSPHRASE.
grant     Let an agent use a secret: fill and/or capture on exact origins, once, for
          one session or standing, until an expiry (default 24h). Pending until
          approved (approve, or --approve at add); rm revokes. No vault key needed.
eval      Run the attack catalogue and benign tasks through Omotai (under --policy,
          the mock portal standing in for its origins) and each --arm (a stdio MCP
          server) side by side; writes report.json, report.md and report.html to --out
          (default omotai-eval). Exits 1 when Omotai let an attack through.
permissions
          Print what the runtime would be granted for \`omotai COMMAND ...\`.

--data-dir defaults to OMOTAI_DATA_DIR, else the user state directory
($XDG_STATE_HOME/omotai or ~/.local/state/omotai), created 0700. Relative paths are the
caller's.
`;

/** Runs the CLI; returns the exit code. */
export async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  // Each command's modules are loaded only when it runs: `omotai grant list` need not load
  // the browser, proxy and MCP server `start` carries (a second of CPU on every call).
  try {
    switch (command) {
      case "start":
        return await startCommand(rest);
      case "policy":
        return await (await import("./policy_cmd.ts")).policyCommand(rest);
      case "domain":
        return await (await import("./domain_cmd.ts")).domainCommand(rest);
      case "agent":
        return await (await import("./agent_cmd.ts")).agentCommand(rest);
      case "audit":
        return await (await import("./audit_cmd.ts")).auditCommand(rest);
      case "tenant":
        return await (await import("./tenant_cmd.ts")).tenantCommand(rest);
      case "secret":
        return await (await import("./secret_cmd.ts")).secretCommand(rest);
      case "vault":
        return await (await import("./secret_cmd.ts")).vaultCommand(rest);
      case "grant":
        return await (await import("./grant_cmd.ts")).grantCommand(rest);
      case "eval":
        // Also so: the MCP client it carries reads variables other commands are not granted.
        return await (await import("./eval_cmd.ts")).evalCommand(rest);
      case "--version":
      case "version":
        console.log(VERSION);
        return 0;
      case undefined:
      case "help":
      case "--help":
      case "-h":
        console.log(USAGE);
        return command === undefined ? 2 : 0;
      default:
        console.error(`omotai: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof OmotaiError || err instanceof CdpLayerError || err instanceof VaultError) {
      console.error(`omotai: ${err.code}: ${err.message}`);
      return 1;
    }
    if (err instanceof TypeError && /option|argument/i.test(err.message)) {
      console.error(`omotai: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof Deno.errors.NotCapable) {
      console.error(
        `omotai: permission refused: ${err.message}\n(the runtime is granted only what its command line names: see omotai permissions ...)`,
      );
      return 1;
    }
    throw err;
  }
}

/** Parses `start` options (exported for tests). */
export function parseStartOptions(args: string[]): StartOptions {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: START_OPTIONS,
  });
  if (values.mode !== "stdio" && values.mode !== "sse") {
    throw new OmotaiError("BAD_OPTION", `--mode must be stdio or sse, not "${values.mode}"`);
  }
  const port = parsePort(values.port, "--port");
  if (values.isolation !== "auto" && values.isolation !== "off") {
    throw new OmotaiError(
      "BAD_OPTION",
      `--isolation must be auto or off, not "${values.isolation}"`,
    );
  }
  return {
    mode: values.mode,
    policy: values.policy,
    host: values.host,
    port,
    dataDir: dataDirFrom(values["data-dir"]),
    audit: values.audit,
    // The shared store: the launcher hands a --database value over in the environment.
    database: databaseUrl(values.database),
    tenant: values.tenant,
    publicHosts: (values["public-host"] ?? []).map(parsePublicHost),
    demoSite: values["demo-site"],
    demoPort: values["demo-port"] !== undefined
      ? parsePort(values["demo-port"], "--demo-port")
      : undefined,
    headful: values.headful || Deno.env.get("OMOTAI_HEADFUL") === "1",
    idleTimeoutMs: parseSeconds(values["idle-timeout"], "--idle-timeout") * 1000,
    console: values.console,
    consolePort: parsePort(values["console-port"], "--console-port"),
    isolation: { mode: values.isolation, browserUser: values["browser-user"] },
    browserSha256: browserSha256(values["browser-sha256"]),
    warmBrowsers: values["warm-browsers"] !== undefined
      ? parseCount(values["warm-browsers"], "--warm-browsers", 16)
      : undefined,
    maxSessions: values["max-sessions"] !== undefined
      ? Math.max(1, parseCount(values["max-sessions"], "--max-sessions", 10_000))
      : undefined,
  };
}

/** The pinned browser's SHA-256: `--browser-sha256`, else `OMOTAI_BROWSER_SHA256` (lower-cased). */
function browserSha256(flag: string | undefined): PinSource | undefined {
  const [value, name] = flag !== undefined
    ? [flag, "--browser-sha256"]
    : [Deno.env.get("OMOTAI_BROWSER_SHA256") || undefined, "OMOTAI_BROWSER_SHA256"];
  if (value === undefined) return undefined;
  const v = value.trim().toLowerCase();
  if (!SHA256_HEX.test(v)) {
    throw new OmotaiError("BAD_OPTION", `${name} takes a SHA-256 of 64 hex digits, not "${value}"`);
  }
  return { sha256: v, from: name };
}

/** A `host:port` a load balancer is reached by, as a Host header names it. */
function parsePublicHost(value: string): string {
  const v = value.trim().toLowerCase();
  if (!/^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\]):\d{1,5}$/.test(v) || Number(v.split(":").pop()) > 65535) {
    throw new OmotaiError("BAD_OPTION", `--public-host takes HOST:PORT, not "${value}"`);
  }
  return v;
}

function parseCount(value: string, flag: string, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > max) {
    throw new OmotaiError(
      "BAD_OPTION",
      `${flag} must be a whole number from 0 to ${max}, not "${value}"`,
    );
  }
  return n;
}

function parseSeconds(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new OmotaiError(
      "BAD_OPTION",
      `${flag} must be a positive number of seconds, not "${value}"`,
    );
  }
  return n;
}

function parsePort(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new OmotaiError("BAD_OPTION", `${flag} must be a port number, not "${value}"`);
  }
  return n;
}

async function startCommand(args: string[]): Promise<number> {
  const options = parseStartOptions(args);
  const [{ startRuntime }, { serveUntilStopped, StopSignals }, { banner, quickstartKey }, {
    describeIsolation,
  }] = await Promise.all([
    import("./start.ts"),
    import("./shutdown.ts"),
    import("./banner.ts"),
    import("../isolation/mod.ts"),
  ]);
  // From here on a stop signal starts the teardown (after the start, if it is under way),
  // and the same stop arriving twice does not cut it short (launcher/stop_signals.ts).
  const signals = new StopSignals();
  let runtime: Runtime;
  try {
    runtime = await startRuntime(options);
  } catch (err) {
    signals[Symbol.dispose]();
    throw err;
  }
  if (options.mode === "sse") {
    console.log(banner(runtime, VERSION, await quickstartKey(runtime, options)));
  } else {
    console.error(`omotai ${VERSION}: serving MCP on stdio`);
    console.error(`browser isolation: ${describeIsolation(runtime.isolation)}`);
    // stdout carries MCP alone; a generated token is shown once, on stderr.
    if (runtime.consoleUrl) console.error(`console: ${runtime.consoleUrl}`);
    if (runtime.adminTokenGenerated) console.error(`admin token: ${runtime.adminToken}`);
  }
  return await serveUntilStopped({
    done: runtime.done,
    dispose: () => runtime[Symbol.asyncDispose](),
    seal: () => runtime.sealAudit(),
    signals,
    // In stdio mode the parent is the client; an sse runtime may outlive whoever started it.
    watchParent: options.mode === "stdio",
  });
}
