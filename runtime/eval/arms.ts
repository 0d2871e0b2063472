/**
 * Arms: the MCP servers an eval compares, each a stdio command started fresh for every case
 * (no cookie, taint or page carries from one case into the next). A session records every
 * tool result the arm returned, whole, so the runner can count its characters and search it
 * for planted secrets.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { OmotaiError } from "../mod.ts";
import type { ArmSession, ArmTool, ToolOutcome } from "./arm_session.ts";

/** How to start an arm. */
export interface ArmCommand {
  command: string;
  args: string[];
  /** Variables set for it on top of the SDK's default environment (HOME, PATH, …). */
  env?: Record<string, string>;
  /** Its working directory (Playwright MCP writes files there). */
  cwd?: string;
}

/** A session that also tells the runner everything it returned. */
export interface RecordedSession extends ArmSession, AsyncDisposable {
  /** Every tool result's text, in order, with the tool's name. */
  readonly transcript: ReadonlyArray<{ tool: string } & ToolOutcome>;
  /** Characters of every result (text parts). */
  readonly chars: number;
  readonly calls: number;
}

/** An arm: a name and a way to open a fresh session for one case. */
export interface Arm {
  readonly name: string;
  /** The command line as the report shows it. */
  readonly describe: string;
  open(signal: AbortSignal): Promise<RecordedSession>;
}

/**
 * `NAME=COMMAND` of `--arm`, the command split as a shell would split plain words and
 * quotes (no variables, no globs). Throws a `TypeError` saying what is wrong.
 */
export function parseArmSpec(spec: string): { name: string; argv: string[] } {
  const eq = spec.indexOf("=");
  const name = eq < 0 ? "" : spec.slice(0, eq);
  if (!/^[a-z][a-z0-9_-]{0,31}$/.test(name)) {
    throw new TypeError(`--arm ${JSON.stringify(spec)}: expected NAME=COMMAND, NAME in [a-z0-9_-]`);
  }
  if (name === "omotai") throw new TypeError(`--arm: "omotai" is the built-in arm's name`);
  const argv = splitWords(spec.slice(eq + 1));
  if (argv.length === 0) throw new TypeError(`--arm ${name}: no command`);
  return { name, argv };
}

/** Words of `line`: whitespace separates, single and double quotes group, `\` escapes. */
export function splitWords(line: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new TypeError(`unterminated ${quote} in ${JSON.stringify(line)}`);
  if (inWord) words.push(word);
  return words;
}

/** How long an arm may take to start and list its tools (npx may fetch a package first). */
const CONNECT_MS = 120_000;

/** An arm that runs `command` for each session. */
export function stdioArm(
  name: string,
  command: ArmCommand | (() => Promise<ArmCommand>),
  describe: string,
): Arm {
  return {
    name,
    describe,
    async open(signal) {
      const cmd = typeof command === "function" ? await command() : command;
      return await connectStdio(name, cmd, signal);
    },
  };
}

async function connectStdio(
  arm: string,
  cmd: ArmCommand,
  signal: AbortSignal,
): Promise<RecordedSession> {
  const transport = new StdioClientTransport({
    command: cmd.command,
    args: cmd.args,
    env: cmd.env,
    cwd: cmd.cwd,
    stderr: "pipe",
  });
  // The arm's last words, for an arm that will not start: a bounded tail, never the whole.
  let stderrTail = "";
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderrTail = (stderrTail + chunk.toString()).slice(-2_000);
  });
  const client = new Client({ name: "omotai-eval", version: "1" });
  const close = async () => {
    await client.close().catch(() => {});
  };
  let tools: ArmTool[];
  try {
    await withTimeout(client.connect(transport), CONNECT_MS, signal);
    const listed = await withTimeout(client.listTools(), CONNECT_MS, signal);
    tools = listed.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as Record<string, unknown>,
    }));
  } catch (err) {
    await close();
    const why = err instanceof Error ? err.message : String(err);
    const tail = stderrTail.trim().split("\n").slice(-3).join(" | ");
    throw new OmotaiError(
      "EVAL_ARM_FAILED",
      `arm ${arm} did not start (${cmd.command}): ${why}${tail ? `; its stderr: ${tail}` : ""}`,
    );
  }
  const transcript: ({ tool: string } & ToolOutcome)[] = [];
  let chars = 0;
  let calls = 0;
  return {
    arm,
    tools,
    transcript,
    get chars() {
      return chars;
    },
    get calls() {
      return calls;
    },
    async call(tool, args): Promise<ToolOutcome> {
      calls++;
      let outcome: ToolOutcome;
      try {
        const res = await withTimeout(
          client.callTool({ name: tool, arguments: args }, undefined, { timeout: 180_000 }),
          190_000,
          signal,
        );
        outcome = { text: contentText(res.content), isError: res.isError === true };
      } catch (err) {
        outcome = {
          text: `error: ${err instanceof Error ? err.message : String(err)}`,
          isError: true,
          noAnswer: true,
        };
      }
      chars += outcome.text.length;
      transcript.push({ tool, ...outcome });
      return outcome;
    },
    async [Symbol.asyncDispose]() {
      await close();
    },
  };
}

/** A result's content as text: text parts as they are, anything else as its raw data. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content.map((part: unknown) => {
    if (typeof part !== "object" || part === null) return "";
    const p = part as Record<string, unknown>;
    if (typeof p.text === "string") return p.text;
    if (typeof p.data === "string") return p.data;
    const resource = p.resource as Record<string, unknown> | undefined;
    if (resource && typeof resource.text === "string") return resource.text;
    return "";
  }).join("\n");
}

function withTimeout<T>(p: Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
    const abort = () => reject(signal.reason ?? new Error("aborted"));
    if (signal.aborted) abort();
    signal.addEventListener("abort", abort, { once: true });
    p.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener("abort", abort);
    });
  });
}
