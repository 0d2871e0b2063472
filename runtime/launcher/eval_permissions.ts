/**
 * The permissions of `omotai eval`: the loopback hosts its pages and attacker endpoints use,
 * its report directory, the arms it spawns, the browser of its control runs and the model's
 * endpoint. Part of the launcher's reading of a command line (`permissions.ts`).
 *
 * @module
 */
import { dirname, join, resolve } from "node:path";
import type { FindBrowserOptions } from "../../cdp/mod.ts";
import type { OptionValues } from "./options.ts";
import { type Grants, optionString, optionStrings } from "./permission_grants.ts";

/** What the eval's grants look at besides the command line (a part of `LaunchFacts`). */
export interface EvalFacts {
  /** The caller's working directory. */
  cwd: string;
  /** The Deno that runs the child (and the Omotai arm). */
  deno: string;
  /** policies-wasm/ of the checkout; its parent is the checkout. */
  policiesDir: string;
  /** The browser picked as `findBrowser()` picks with `options`; throws when there is none. */
  browser(options: FindBrowserOptions): string;
}

/** The loopback addresses the eval serves its pages and attacker endpoints on (any port). */
export const EVAL_HOSTS = ["127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"] as const;

/**
 * `omotai eval`: its pages and attacker endpoints on loopback, the report directory, the arms
 * it spawns (the Omotai arm is the runtime again, started as the launcher starts `omotai
 * start`), a plain Chromium for the control runs and the report check, and the model's
 * endpoint.
 */
export function evalGrants(
  values: OptionValues,
  grants: Grants,
  childEnv: Record<string, string>,
  facts: EvalFacts,
): void {
  const abs = (p: string) => resolve(facts.cwd, p);
  const policy = optionString(values, "policy");
  if (policy !== undefined) grants.read.add(abs(policy));
  // The report, and `<out>/.work` (each arm's data dir, the control runs' browser profiles).
  const out = abs(optionString(values, "out") ?? "omotai-eval");
  grants.read.add(out);
  grants.write.add(out);
  // The runtime's own source, read-only.
  const checkout = dirname(facts.policiesDir);
  grants.read.add(join(checkout, "runtime"));
  for (const host of EVAL_HOSTS) grants.net.add(host);
  const agent = optionString(values, "agent") ?? "scripted";
  if (agent.startsWith("openai:")) {
    const address = httpAddress(agent.slice("openai:".length));
    if (address !== undefined) grants.net.add(address);
  }
  // As with `start`, the browser is picked here and handed on: the eval (and the runtime it
  // starts) never picks one it may not run. cdp/ stats it before it starts it.
  // The fuller build when installed: its controls must make every request it would, and the
  // runtime the eval starts is tried against all of them.
  const browser = facts.browser({ preferFull: true });
  childEnv.OMOTAI_BROWSER = browser;
  grants.read.add(browser);
  grants.run.add(browser);
  if (values["no-omotai"] !== true) {
    // `deno run --config <checkout>/deno.json … runtime/cli/main.ts start …` (childArgv()).
    grants.read.add(join(checkout, "deno.json"));
    grants.run.add(facts.deno);
  }
  for (const arm of optionStrings(values, "arm")) {
    const program = armProgram(arm);
    // A bare name is looked up on PATH when it is run; a path is the caller's.
    if (program !== undefined) grants.run.add(program.includes("/") ? abs(program) : program);
  }
  // cdp/ adds --no-sandbox to a Chromium it starts as root, and asks for its uid to know.
  grants.sys.add("uid");
}

/** The program of `--arm NAME=COMMAND`: COMMAND's first word (undefined when there is none). */
function armProgram(arm: string): string | undefined {
  const eq = arm.indexOf("=");
  if (eq < 0) return undefined;
  const [program] = arm.slice(eq + 1).trim().split(/\s+/);
  return program || undefined;
}

/** `host:port` of an http(s) URL (the default port when it names none), else undefined. */
function httpAddress(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || !u.hostname) return undefined;
  return `${u.hostname}:${u.port || (u.protocol === "https:" ? "443" : "80")}`;
}
