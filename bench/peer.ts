/**
 * The peer we compare against: Playwright MCP, installed from npm into bench/.peer on first
 * use and run with the system Chromium, headless and isolated, over stdio.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { findBrowser, runningAsRoot } from "../cdp/mod.ts";

/** Pinned peer version. */
export const PLAYWRIGHT_MCP_VERSION = "0.0.83";
const PEER_DIR = new URL(".peer/", import.meta.url).pathname;

/** A connected MCP client plus a text-returning call helper. */
export interface BenchClient extends AsyncDisposable {
  name: string;
  call(tool: string, args: Record<string, unknown>): Promise<string>;
}

/** Installs the pinned peer into bench/.peer unless it is there; returns the path of its CLI. */
export async function ensurePeerInstalled(): Promise<string> {
  const cli = `${PEER_DIR}node_modules/@playwright/mcp/cli.js`;
  try {
    await Deno.stat(cli);
  } catch {
    console.error(`bench: installing @playwright/mcp@${PLAYWRIGHT_MCP_VERSION} into bench/.peer`);
    await Deno.mkdir(PEER_DIR, { recursive: true });
    const out = await new Deno.Command("npm", {
      args: ["install", "--prefix", PEER_DIR, `@playwright/mcp@${PLAYWRIGHT_MCP_VERSION}`],
      stdout: "null",
      stderr: "inherit",
    }).output();
    if (!out.success) throw new Error("npm install @playwright/mcp failed");
  }
  return cli;
}

/** The command that runs the peer's CLI at `cli` on the system Chromium, headless, isolated. */
export function peerCommand(cli: string): { command: string; args: string[] } {
  return {
    command: "node",
    args: [
      cli,
      "--executable-path",
      findBrowser(Deno.env.get("OMOTAI_BROWSER")),
      "--headless",
      "--isolated",
      // Chromium's sandbox cannot start as root; Omotai adds the same flag in that case.
      ...(runningAsRoot() ? ["--no-sandbox"] : []),
    ],
  };
}

async function connect(name: string, command: string, args: string[]): Promise<BenchClient> {
  const client = new Client({ name: "omotai-bench", version: "0" });
  // Playwright MCP writes snapshot and console files into its working directory.
  const cwd = await Deno.makeTempDir({ prefix: `bench-${name}-` });
  await client.connect(new StdioClientTransport({ command, args, stderr: "ignore", cwd }));
  return {
    name,
    async call(tool, args) {
      const res = await client.callTool({ name: tool, arguments: args });
      const text = ((res.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");
      // A benchmark of error messages measures nothing: stop loudly.
      if (res.isError || text.startsWith("### Error")) {
        throw new Error(`${name} ${tool} failed: ${text.slice(0, 300)}`);
      }
      return text;
    },
    async [Symbol.asyncDispose]() {
      await client.close().catch(() => {});
      await Deno.remove(cwd, { recursive: true }).catch(() => {});
    },
  };
}

/** Starts Playwright MCP over stdio. */
export async function startPlaywrightMcp(): Promise<BenchClient> {
  const { command, args } = peerCommand(await ensurePeerInstalled());
  return await connect("playwright-mcp", command, args);
}

/** Starts Omotai over stdio, the same transport as the peer, allowing `origins`. */
export async function startOmotai(dataDir: string, origins: string[]): Promise<BenchClient> {
  const policy = `${dataDir}/bench-policy.yaml`;
  await Deno.writeTextFile(policy, `allowed_origins: [${origins.join(", ")}]\n`);
  return await connect("omotai", Deno.execPath(), [
    "run",
    "-A",
    new URL("../runtime/main.ts", import.meta.url).pathname,
    "start",
    "--data-dir",
    dataDir,
    "--policy",
    policy,
  ]);
}
