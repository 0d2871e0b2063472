/**
 * `omotai` subcommands run as a subprocess under the omotai task's permissions, for the CLI
 * tests: a clean environment (the caller's vault variables and OMOTAI_DB never leak in),
 * stdin piped, and data dirs under runs/ (the only place the task may write).
 */
import { omotaiFlags } from "./harness.ts";

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
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...await omotaiFlags(), "runtime/main.ts", ...args],
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

/** A random 32-byte vault key, base64. */
export function randomVaultKey(): string {
  return btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
}
