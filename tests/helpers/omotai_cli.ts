/**
 * `omotai` subcommands run as a subprocess under the omotai task's permissions, for the CLI
 * tests: a clean environment (the caller's vault variables and OMOTAI_DB never leak in),
 * stdin piped, and data dirs under runs/ (the only place the task may write).
 */
import assert from "node:assert/strict";
import { rawKeySource, type SecretKind, Vault } from "../../vault/mod.ts";
import { databasePath, openDatabase } from "../../runtime/store/database.ts";
import { childArgv, localFacts } from "../../runtime/launcher/launcher.ts";
import { childPermissions } from "../../runtime/launcher/permissions.ts";
import { omotaiFlags, runtimeCommand } from "./harness.ts";

/** What a run printed and how it ended. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const decoder = new TextDecoder();

/** Runs `omotai ARGS` with `stdin` piped in and `env` on top of a clean slate. */
export async function runOmotai(
  args: string[],
  env: Record<string, string> = {},
  stdin = "",
): Promise<CliRun> {
  return await runDeno(["run", ...await omotaiFlags(), "runtime/main.ts", ...args], env, stdin);
}

/**
 * Runs the runtime's own process for `omotai ARGS` exactly as the launcher starts it (the
 * same `deno` arguments, permissions and variables: `runtimeCommand`), without the launcher
 * process in front: the same command's output and exit code for half the processes. The
 * launcher itself (its plan, its relay of stdio and exit code) is proven by every test that
 * goes through `runOmotai`; a test of a command uses this for its further calls.
 */
export async function runRuntime(
  args: string[],
  env: Record<string, string> = {},
  stdin = "",
): Promise<CliRun> {
  const command = runtimeCommand(args);
  return await runDeno(command.args, { ...env, ...command.env }, stdin);
}

/**
 * Runs `omotai ARGS` for each of `lines` as `runRuntime` does, but one after another in ONE
 * process (tests/helpers/cli_batch_main.ts calls the runtime's `main()` once per line): a
 * process of its own costs about a CPU-second, and the lines of a test's refusals differ only
 * in what `main()` does with them. Each line gets exactly the permissions and variables the
 * launcher would give it (all lines must get the same ones, or this throws), `env` on top of
 * the same clean slate, no stdin (commands that read one use `runRuntime`), and its own
 * stdout, stderr and exit code. The process around a command (the exit code and streams as
 * a shell sees them) is proven by the `runOmotai` and `runRuntime` calls of the same tests.
 */
export async function runRuntimeBatch(
  lines: string[][],
  env: Record<string, string> = {},
): Promise<CliRun[]> {
  const plans = lines.map((args) => childPermissions(args, localFacts()));
  for (const [i, plan] of plans.entries()) {
    assert.deepEqual(
      [plan.flags, plan.env],
      [plans[0].flags, plans[0].env],
      `${lines[i].join(" ")}: other permissions than ${lines[0].join(" ")}; run it on its own`,
    );
  }
  const args = childArgv(
    { ...plans[0], args: [JSON.stringify(plans.map((p) => p.args))] },
    { entry: new URL("./cli_batch_main.ts", import.meta.url) },
  );
  const out = await runDeno(args, { ...env, ...plans[0].env }, "");
  assert.equal(out.code, 0, `the batch failed:\n${out.stderr}`);
  const runs: CliRun[] = JSON.parse(out.stdout);
  assert.equal(runs.length, lines.length, out.stdout);
  return runs;
}

async function runDeno(
  args: string[],
  env: Record<string, string>,
  stdin: string,
): Promise<CliRun> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: {
      OMOTAI_DB: "",
      OMOTAI_VAULT_KEY: "",
      OMOTAI_VAULT_PASSPHRASE: "",
      OMOTAI_VAULT_NEW_KEY: "",
      OMOTAI_VAULT_NEW_PASSPHRASE: "",
      ...env,
    },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const out = await child.output();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/** Runs `fn` with a fresh data dir under runs/ (named after `prefix`), removed afterwards. */
export async function withRunsDir(
  prefix: string,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = `runs/${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(dir, { recursive: true });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * Puts secret `id` in the vault of `dir` under the raw `key`, in this process: what `omotai
 * secret add` does (tests/secret_cli_test.ts proves the command); for a test of something
 * else it is only the stage.
 */
export async function stageSecret(
  dir: string,
  key: string,
  id: string,
  kind: SecretKind,
  value: string,
): Promise<void> {
  const db = openDatabase(databasePath(dir));
  try {
    using vault = await Vault.open(db, rawKeySource(key));
    await vault.add(id, kind, value);
  } finally {
    db.close();
  }
}

/** A random 32-byte vault key, base64. */
export function randomVaultKey(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
}

/** A runtime subprocess serving over HTTP: its process, its URL, what it printed on stderr. */
export interface ServingRuntime {
  child: Deno.ChildProcess;
  /** The Streamable HTTP base URL (without `/mcp`). */
  url: string;
  stderr(): string;
}

const BANNER = /Streamable HTTP: (\S+)\/mcp/;

/**
 * Spawns `command` (a runtime in sse mode, stdout and stderr piped) and resolves once it
 * printed its Streamable HTTP URL; the rest of its stdout is drained so it never blocks.
 */
export async function spawnServing(command: Deno.Command): Promise<ServingRuntime> {
  const child = command.spawn();
  let stderr = "";
  child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (stderr += chunk) }),
  ).catch(() => {});
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let banner = "";
  while (!BANNER.test(banner)) {
    const { value, done } = await reader.read();
    assert.ok(!done, `no banner:\n${banner}\n${stderr}`);
    banner += value;
  }
  (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return { child, url: BANNER.exec(banner)![1], stderr: () => stderr };
}
