/**
 * Test harness: a runtime started in-process on a random loopback port with its own data
 * dir, plus MCP clients (the SDK's `Client`) that record every output they receive.
 *
 * @module
 */
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/sse"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type Runtime, type StartOptions, startRuntime } from "../../runtime/cli/start.ts";
import { type FixtureSite, serveFixtureSite } from "../fixtures/site.ts";
import { childArgv, localFacts } from "../../runtime/launcher/launcher.ts";
import { childPermissions } from "../../runtime/launcher/permissions.ts";
import { ANSWER_BOUND_MS } from "./until.ts";
import { DEFAULT_TOOL_SETTINGS, TOOLS, type ToolSettings } from "../../runtime/tools/mod.ts";

export { ANSWER_BOUND_MS };

/**
 * How long a test client waits for any one tool call before giving up on it (the SDK's
 * default is 60 s). Not a claim of speed: a call on a loaded machine (a fresh browser, a huge
 * page, a recovery) can take longer than a quiet one's minute, and a test asserts what the
 * call answers. A call that never answers still fails the test, after this.
 */
export const CALL_TIMEOUT_MS = 300_000;

/**
 * The `deno run` permission flags of the `omotai` task in deno.json, `$OMOTAI_DENO`
 * resolved: the launcher's. `deno run <these> runtime/main.ts ARGS` is the `omotai` command,
 * which runs the runtime in a child with the permissions ARGS need.
 */
export async function omotaiFlags(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  const task: string = config.tasks.omotai;
  return task.replaceAll("$OMOTAI_DENO", Deno.execPath()).split(/\s+/)
    .filter((w) => w.startsWith("--allow-"));
}

/**
 * The runtime's own process for `omotai ARGS`, exactly as the launcher would start it: the
 * `deno` arguments (permissions worked out from ARGS) and the variables set for it. Tests that
 * watch the runtime process itself (its signals, its parent) start it without the launcher.
 */
export function runtimeCommand(args: string[]): { args: string[]; env: Record<string, string> } {
  const plan = childPermissions(args, localFacts());
  return {
    args: childArgv(plan, { entry: new URL("../../runtime/cli/main.ts", import.meta.url) }),
    env: plan.env,
  };
}

let agentSeq = 0;

/**
 * A client transport to `runtime` carrying a fresh agent key (`name` or a new test agent):
 * the MCP door refuses any request without one.
 */
export async function agentTransport(
  runtime: Runtime,
  kind: "http" | "sse" = "http",
  name = `test-${++agentSeq}`,
): Promise<SSEClientTransport | StreamableHTTPClientTransport> {
  const { key } = await runtime.agents.add(name);
  return keyedTransport(runtime.url!, key, kind);
}

/** A client transport to `baseUrl` that sends `key` on every request. */
export function keyedTransport(
  baseUrl: string,
  key: string,
  kind: "http" | "sse" = "http",
): SSEClientTransport | StreamableHTTPClientTransport {
  const headers = { Authorization: `Bearer ${key}` };
  const url = new URL(kind === "sse" ? "/sse" : "/mcp", baseUrl);
  if (kind === "http") return new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  return new SSEClientTransport(url, {
    requestInit: { headers },
    // The SSE stream itself is a GET the transport opens with its own fetch.
    eventSourceInit: {
      fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...headers } }),
    },
  });
}

/**
 * The tools that end with a view and take `answer` (the page card by default, since issue
 * 40). The suite's end-to-end tests were written against the overview those actions sent
 * before and assert on its content (refs to act on next, text that must or must not be
 * shown): `TestClient.call()` asks for it, so each still tests what it was written for. The
 * card itself is tested by passing `answer: "card"` (or calling the client's `callTool`).
 */
/**
 * Tool settings as a policy with `views: {action_answer: overview}` makes them: for the tests
 * that drive `runTool()` directly and assert on the overview an action answers with.
 */
export const OVERVIEW_SETTINGS: Readonly<ToolSettings> = {
  ...DEFAULT_TOOL_SETTINGS,
  actionAnswer: "overview",
};

export const ANSWERING: ReadonlySet<string> = new Set(
  TOOLS.filter((t) => "answer" in t.schema.shape).map((t) => t.name),
);

/** One tool call's outcome. */
export interface CallOutcome {
  text: string;
  isError: boolean;
}

/** An MCP client that keeps every text it received. */
export class TestClient implements AsyncDisposable {
  readonly client: Client;
  /** Every text the client received (tool results, errors, listings). */
  readonly outputs: string[] = [];

  constructor(client: Client) {
    this.client = client;
  }

  /**
   * Calls a tool; returns its text and error flag. An action that ends with a view is sent
   * `answer: "overview"` unless `args` say which (see {@link ANSWERING}).
   */
  async call(name: string, args: Record<string, unknown> = {}): Promise<CallOutcome> {
    const sent = ANSWERING.has(name) && !("answer" in args)
      ? { ...args, answer: "overview" }
      : args;
    try {
      const res = await this.client.callTool({ name, arguments: sent }, undefined, {
        timeout: CALL_TIMEOUT_MS,
      });
      const content = (res.content ?? []) as { type: string; text?: string }[];
      const text = content.map((c) => c.text ?? "").join("\n");
      this.outputs.push(text);
      return { text, isError: res.isError === true };
    } catch (err) {
      const text = `protocol error: ${(err as Error).message}`;
      this.outputs.push(text);
      return { text, isError: true };
    }
  }

  /**
   * Ends the session as a client should: Streamable HTTP's DELETE (the SDK's `close()` alone
   * only drops the connection, and the runtime would keep the session until its idle
   * timeout), then the connection.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    const transport = this.client.transport as
      | { terminateSession?: () => Promise<void> }
      | undefined;
    await transport?.terminateSession?.().catch(() => {});
    await this.client.close().catch(() => {});
  }
}

/** A runtime plus fixture site for one test. */
export interface Harness extends AsyncDisposable {
  runtime: Runtime;
  site: FixtureSite;
  dataDir: string;
  connect(transport?: "sse" | "http"): Promise<TestClient>;
}

/**
 * Starts a fixture site and a runtime in sse mode on a random port. `policy` builds the
 * policy YAML from the site; by default both fixture origins are allowed and writes too.
 * `options` go to the runtime's start as they are.
 */
export async function startHarness(
  policy: (site: FixtureSite) => string = (site) =>
    `allowed_origins: [${site.origin}, ${site.otherOrigin}]\nread_only: false\n`,
  options: Partial<StartOptions> = {},
): Promise<Harness> {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-test-" });
  const site = serveFixtureSite();
  const runtime = await startTestRuntime(dataDir, policy(site), options);
  const clients: TestClient[] = [];
  return {
    runtime,
    site,
    dataDir,
    async connect(transport = "http") {
      const client = new Client({ name: "omotai-test", version: "0" });
      await client.connect(await agentTransport(runtime, transport === "sse" ? "sse" : "http"));
      const c = new TestClient(client);
      clients.push(c);
      return c;
    },
    async [Symbol.asyncDispose]() {
      for (const c of clients) await c[Symbol.asyncDispose]();
      await runtime[Symbol.asyncDispose]();
      await site[Symbol.asyncDispose]();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * Starts a runtime in sse mode on a random loopback port, with `policyYaml` written into
 * `dataDir` as its policy file.
 */
export async function startTestRuntime(
  dataDir: string,
  policyYaml: string,
  options: Partial<StartOptions> = {},
): Promise<Runtime> {
  const policyFile = `${dataDir}/policy.yaml`;
  await Deno.writeTextFile(policyFile, policyYaml);
  return await startRuntime({
    mode: "sse",
    host: "127.0.0.1",
    port: 0,
    dataDir,
    policy: policyFile,
    // A warm browser per test runtime would double the suite's launches: the pool's own
    // tests ask for one.
    warmBrowsers: 0,
    ...options,
  });
}

/** Connects to `omotai start` (stdio) spawned as a subprocess with the given permissions. */
export async function connectStdio(
  dataDir: string,
  permissions: string[],
  policyFile: string,
): Promise<TestClient> {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      "run",
      ...permissions,
      "runtime/main.ts",
      "start",
      "--data-dir",
      dataDir,
      "--policy",
      policyFile,
    ],
    stderr: "pipe",
  });
  const client = new Client({ name: "omotai-stdio-test", version: "0" });
  await client.connect(transport);
  return new TestClient(client);
}

/** The ref of the first snapshot line matching `pattern` (e.g. /"Next page" ->/). */
export function refOf(snapshot: string, pattern: RegExp): string {
  for (const line of snapshot.split("\n")) {
    if (pattern.test(line)) {
      const m = line.match(/^(?:- )?\[(e\d+)\]/);
      if (m) return m[1];
    }
  }
  throw new Error(`no ref for ${pattern} in:\n${snapshot}`);
}

/**
 * A snapshot from the fixture site's out-of-process frame (the one on 127.0.0.2) on, to find
 * what is inside that frame rather than in the same-origin one.
 */
export function crossFrameText(snapshot: string): string {
  const lines = snapshot.split("\n");
  const start = lines.findIndex((l) => /\[frame http:\/\/127\.0\.0\.2/.test(l));
  return lines.slice(start).join("\n");
}

/**
 * Polls `check` until it returns true or `ms` pass (by default {@link ANSWER_BOUND_MS}: a
 * deadline bounds a wait for an outcome, and waiting longer costs only a failing test time).
 * A test that waits to see that something does NOT happen passes its own, shorter `ms`.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  ms = ANSWER_BOUND_MS,
): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return await check();
}
