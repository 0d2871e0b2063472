/**
 * The runtime against the MCP clients people use, each a real process: the MCP Inspector's
 * CLI over stdio and Streamable HTTP, mcp-remote bridging a stdio client to `/mcp`, the SDK
 * client over all three transports, and the protocol details clients rely on (version
 * negotiation, ping, progress while a call waits, cancellation). Clients are pinned in
 * tests/helpers/clients.ts; docs/clients.md says what is covered.
 *
 * @module
 */
import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/stdio"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/shared/transport"
import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/types"
import {
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  type MessageExtraInfo,
  type Progress,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { Runtime } from "../runtime/cli/start.ts";
import { type FixtureSite, serveFixtureSite } from "./fixtures/site.ts";
import { clientStateEnv, ensureClientsInstalled } from "./helpers/clients.ts";
import {
  ANSWER_BOUND_MS,
  CALL_TIMEOUT_MS,
  keyedTransport,
  omotaiFlags,
  startTestRuntime,
} from "./helpers/harness.ts";
import { PROGRESS_EVERY_MS } from "../runtime/mcp/progress.ts";

const ADMIN_TOKEN = "clients-test-admin-token-0123456789abcdef";

/** Both fixture origins, so the home page's cross-origin frame loads too. */
function policyFor(site: FixtureSite): string {
  return `allowed_origins: [${site.origin}, ${site.otherOrigin}]\n`;
}

/**
 * A data dir under runs/ (the omotai task may write only there) holding the policy, for a
 * runtime spawned over stdio; removed on dispose.
 */
async function stdioDataDir(site: FixtureSite): Promise<AsyncDisposable & { dir: string }> {
  const dir = `runs/test-clients-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/policy.yaml`, policyFor(site));
  return {
    dir,
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** `omotai start --mode stdio` exactly as the omotai task runs it. */
async function stdioServer(dataDir: string, extra: string[] = []): Promise<string[]> {
  return [
    Deno.execPath(),
    "run",
    ...await omotaiFlags(),
    "runtime/main.ts",
    "start",
    "--mode",
    "stdio",
    "--data-dir",
    dataDir,
    "--policy",
    `${dataDir}/policy.yaml`,
    ...extra,
  ];
}

/** An in-process runtime in sse mode (legacy SSE and Streamable HTTP) with its data dir. */
async function sseRuntime(site: FixtureSite): Promise<AsyncDisposable & { runtime: Runtime }> {
  const dataDir = await Deno.makeTempDir({ prefix: "omotai-clients-" });
  const previous = Deno.env.get("OMOTAI_ADMIN_TOKEN");
  Deno.env.set("OMOTAI_ADMIN_TOKEN", ADMIN_TOKEN);
  try {
    const runtime = await startTestRuntime(dataDir, policyFor(site));
    return {
      runtime,
      async [Symbol.asyncDispose]() {
        await runtime[Symbol.asyncDispose]();
        await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      },
    };
  } finally {
    if (previous === undefined) Deno.env.delete("OMOTAI_ADMIN_TOKEN");
    else Deno.env.set("OMOTAI_ADMIN_TOKEN", previous);
  }
}

/** A scratch directory for the clients' own state (kept out of $HOME), removed on dispose. */
async function clientState(): Promise<AsyncDisposable & { env: Record<string, string> }> {
  const dir = await Deno.makeTempDir({ prefix: "omotai-client-state-" });
  return {
    env: clientStateEnv(dir),
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** What one Inspector CLI run printed (`--format json`: one JSON object). */
interface InspectorRun {
  code: number;
  json: {
    result?: {
      tools?: { name: string }[];
      content?: { type: string; text?: string }[];
      isError?: boolean;
    };
    error?: { code: string; message: string };
  };
  stderr: string;
}

/** Runs `node <inspector> --cli <args> --format json`, then the server command after `--`. */
async function inspector(
  args: string[],
  env: Record<string, string>,
  server: string[] = [],
): Promise<InspectorRun> {
  const { inspector } = await ensureClientsInstalled();
  const out = await new Deno.Command("node", {
    args: [
      inspector,
      "--cli",
      ...args,
      "--format",
      "json",
      // The Inspector gives a server 15 s to connect; a stdio server (launcher, runtime,
      // Chromium) on a loaded machine may need more. A refusal still comes at once.
      "--connect-timeout",
      "120000",
      ...(server.length ? ["--", ...server] : []),
    ],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  let json: InspectorRun["json"];
  try {
    // A result goes to stdout; an error envelope, as the last line, to stderr.
    json = JSON.parse(stdout.trim() || stderr.trim().split("\n").at(-1) || "");
  } catch {
    throw new Error(`inspector printed no JSON (exit ${out.code}):\n${stdout}\n${stderr}`);
  }
  return { code: out.code, json, stderr };
}

/** The text of a tool result. */
function textOf(result: Record<string, unknown>): string {
  return ((result.content ?? []) as { text?: string }[]).map((c) => c.text ?? "").join("\n");
}

Deno.test("Inspector CLI over stdio: tools/list lists browser_navigate, tools/call returns the page", async () => {
  await using site = serveFixtureSite();
  // Each run spawns its own server: each gets a data dir of its own, so the three run at once.
  await using listData = await stdioDataDir(site);
  await using callData = await stdioDataDir(site);
  await using deniedData = await stdioDataDir(site);
  await using state = await clientState();

  // The list and the denied call never browse: without a warm browser, none starts for them.
  const cold = ["--warm-browsers", "0"];
  const [list, call, denied] = await Promise.all([
    inspector(["--method", "tools/list"], state.env, await stdioServer(listData.dir, cold)),
    inspector(
      [
        "--method",
        "tools/call",
        "--tool-name",
        "browser_navigate",
        "--tool-arg",
        `url=${site.origin}/`,
      ],
      state.env,
      await stdioServer(callData.dir),
    ),
    inspector(
      [
        "--method",
        "tools/call",
        "--tool-name",
        "browser_navigate",
        "--tool-arg",
        "url=http://127.0.0.3:9/",
      ],
      state.env,
      await stdioServer(deniedData.dir, cold),
    ),
  ]);
  assert.equal(list.code, 0, list.stderr);
  const names = (list.json.result?.tools ?? []).map((t) => t.name);
  assert.ok(names.includes("browser_navigate"), `tools/list: ${names.join(", ")}`);
  assert.ok(names.includes("browser_snapshot"), `tools/list: ${names.join(", ")}`);

  assert.equal(call.code, 0, call.stderr);
  assert.notEqual(call.json.result?.isError, true, JSON.stringify(call.json));
  const text = textOf(call.json.result ?? {});
  assert.match(text, /^navigated to http:\/\/127\.0\.0\.1:\d+/);
  assert.match(text, /# Fixture home/);
  // The page card: its heading, and its links counted (the links themselves: browser_snapshot).
  assert.match(text, /first view · \d+ links?/);
  assert.ok(site.hits.includes("GET /"), "the runtime's Chromium fetched the page");

  // The policy reaches a real client as an error result (the Inspector exits 5 on one).
  assert.equal(denied.json.result?.isError, true, JSON.stringify(denied.json));
  assert.match(textOf(denied.json.result ?? {}), /^denied: ORIGIN_NOT_ALLOWED/);
  assert.notEqual(denied.code, 0);
});

/** A JSON-RPC message seen loosely, to read any of its fields. */
interface Wire {
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** Wraps a client transport and keeps every message sent and received, in order. */
class RecordingTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly sent: Wire[] = [];
  readonly received: Wire[] = [];
  readonly inner: Transport;

  constructor(inner: Transport) {
    this.inner = inner;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      this.received.push(message as Wire);
      this.onmessage?.(message, extra);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push(message as Wire);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  /** The id of the last request sent with `method` (and, for tools/call, that tool). */
  requestId(method: string, tool?: string): string | number {
    const req = this.sent.findLast((m) =>
      m.method === method && m.id !== undefined && (!tool || m.params?.name === tool)
    );
    assert.ok(req?.id !== undefined, `no ${method} ${tool ?? ""} request was sent`);
    return req.id;
  }

  /** Every message received answering request `id` (results and errors). */
  answersTo(id: string | number): Wire[] {
    return this.received.filter((m) => m.id === id && m.method === undefined);
  }
}

/** `p`, or "timeout" after `ms` (the timer is cleared either way). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | "timeout"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), ms));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A question as the console's API lists it. */
interface Question {
  question: string;
  state: string;
}

/** The questions the operator sees on the console at `consoleUrl`. */
async function questionsAt(consoleUrl: string): Promise<Question[]> {
  const res = await fetch(new URL("/api/questions", consoleUrl), {
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.equal(res.status, 200);
  return await res.json();
}

/** Polls until the question `text` is in `state` on the console, or ANSWER_BOUND_MS pass. */
async function questionReaches(consoleUrl: string, text: string, state: string): Promise<string> {
  const deadline = Date.now() + ANSWER_BOUND_MS;
  let seen = "absent";
  while (Date.now() < deadline) {
    seen = (await questionsAt(consoleUrl)).find((q) => q.question === text)?.state ?? "absent";
    if (seen === state) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return seen;
}

/**
 * The same calls over one transport: initialize at the SDK's newest protocol version, ping,
 * tools/list, browser_navigate; then `ask_human` with nobody answering, with a progress
 * token, cancelled through the SDK's AbortSignal once progress arrived; then the session
 * must answer the next call at once (a call still running would hold it).
 */
async function exerciseTransport(
  label: string,
  transport: Transport,
  site: FixtureSite,
  consoleOf: () => Promise<string>,
): Promise<void> {
  const wire = new RecordingTransport(transport);
  const client = new Client({ name: `matrix-${label}`, version: "0" });
  await client.connect(wire);
  try {
    const consoleUrl = await consoleOf();
    const init = wire.answersTo(wire.requestId("initialize"))[0];
    assert.equal(wire.sent[0].params?.protocolVersion, LATEST_PROTOCOL_VERSION, label);
    assert.equal(init?.result?.protocolVersion, LATEST_PROTOCOL_VERSION, `${label}: negotiated`);
    assert.equal(client.getServerVersion()?.name, "omotai", label);
    assert.deepEqual(await client.ping(), {}, `${label}: ping`);

    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === "browser_navigate"), `${label}: tools/list`);
    const nav = await client.callTool(
      {
        name: "browser_navigate",
        arguments: { url: `${site.origin}/` },
      },
      undefined,
      { timeout: CALL_TIMEOUT_MS },
    );
    assert.notEqual(nav.isError, true, `${label}: ${textOf(nav)}`);
    assert.match(textOf(nav), /# Fixture home/, label);

    const question = `Which size, ${label}? ${crypto.randomUUID()}`;
    const progress: Progress[] = [];
    let heard!: () => void;
    const firstProgress = new Promise<void>((r) => heard = r);
    const abort = new AbortController();
    const asked = client.callTool({ name: "ask_human", arguments: { question } }, undefined, {
      signal: abort.signal,
      timeout: CALL_TIMEOUT_MS,
      onprogress: (p) => {
        progress.push(p);
        heard();
      },
    }).then(() => "answered", (err: Error) => err);
    // The runtime sends progress every PROGRESS_EVERY_MS (5 s) while a call waits; a loaded
    // machine's timers fire late, so the bound is a loaded machine's.
    assert.notEqual(
      await within(firstProgress, PROGRESS_EVERY_MS + ANSWER_BOUND_MS),
      "timeout",
      `${label}: no progress while the call waited`,
    );
    const callId = wire.requestId("tools/call", "ask_human");
    const notified = wire.received.filter((m) => m.method === "notifications/progress");
    assert.equal(notified[0]?.params?.progressToken, callId, `${label}: progress names the call`);
    assert.ok(progress[0].progress >= 1, `${label}: ${JSON.stringify(progress)}`);
    assert.match(progress[0].message ?? "", /still working/, label);
    assert.equal(await questionReaches(consoleUrl, question, "pending"), "pending", label);

    // Cancelled, the call rejects (nobody answers the question: it would otherwise wait for
    // the operator).
    abort.abort();
    const outcome = await within(asked, ANSWER_BOUND_MS);
    assert.ok(outcome instanceof Error, `${label}: the cancelled call settled with ${outcome}`);
    const cancelled = wire.sent.find((m) => m.method === "notifications/cancelled");
    assert.equal(cancelled?.params?.requestId, callId, `${label}: notifications/cancelled sent`);
    assert.equal(
      await questionReaches(consoleUrl, question, "withdrawn"),
      "withdrawn",
      `${label}: the cancellation reached the runtime (the operator's question is withdrawn)`,
    );

    // A call the runtime kept running after the cancel would hold the session: this one
    // would wait for the operator. "At once" is a loaded machine's bound (until.ts).
    const next = Date.now();
    const snap = await client.callTool({ name: "browser_snapshot", arguments: {} }, undefined, {
      timeout: CALL_TIMEOUT_MS,
    }).catch((err: Error) => err);
    const took = Date.now() - next;
    assert.ok(
      !(snap instanceof Error) && took < ANSWER_BOUND_MS,
      `${label}: the session must answer at once after a cancel; ${
        snap instanceof Error ? snap.message : `${took} ms`
      }`,
    );
    assert.match(textOf(snap), /# Fixture home/, label);
    assert.deepEqual(wire.answersTo(callId), [], `${label}: no answer to a cancelled request`);
  } finally {
    // A Streamable HTTP client that leaves says so (DELETE): its browser closes now, not idle.
    if (transport instanceof StreamableHTTPClientTransport) {
      await transport.terminateSession().catch(() => {});
    }
    await client.close().catch(() => {});
  }
}

/** One POST to `/mcp` with the agent key; the JSON-RPC messages of its answer (JSON or SSE). */
async function postMcp(
  url: string,
  key: string,
  body: Wire & { jsonrpc: "2.0" },
  headers: Record<string, string> = {},
): Promise<{ status: number; session: string | null; messages: Wire[] }> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${key}`,
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const type = res.headers.get("content-type") ?? "";
  const messages: Wire[] = type.includes("text/event-stream")
    ? text.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)))
    : type.includes("application/json")
    ? [JSON.parse(text)].flat()
    : [];
  return { status: res.status, session: res.headers.get("mcp-session-id"), messages };
}

// One sse-mode runtime (and fixture site) for the clients that connect over HTTP: each
// case brings clients of its own, under agents of its own, and reads only what they did
// (its agent's audit rows, its own question on the console). Each case is a step.
Deno.test("clients over HTTP against one sse-mode runtime", async (t) => {
  await using site = serveFixtureSite();
  await using rt = await sseRuntime(site);

  await t.step(
    "Inspector CLI over Streamable HTTP and legacy SSE: an agent key in --header lists tools and navigates",
    async () => {
      await using state = await clientState();
      const url = new URL("/mcp", rt.runtime.url!).href;
      const { key } = await rt.runtime.agents.add("inspector-http");
      const keyed = ["--transport", "http", "--header", `Authorization: Bearer ${key}`];

      // Four runs, each a client of its own on one runtime: they run at once. tools/list over
      // Streamable HTTP is the `auto` run's (after its fallback it initializes as any other run;
      // `call` is the default era's initialize).
      const [call, auto, sse, bare] = await Promise.all([
        inspector([
          url,
          ...keyed,
          "--method",
          "tools/call",
          "--tool-name",
          "browser_navigate",
          "--tool-arg",
          `url=${site.origin}/next`,
        ], state.env),
        inspector([url, ...keyed, "--protocol-era", "auto", "--method", "tools/list"], state.env),
        inspector([
          new URL("/sse", rt.runtime.url!).href,
          "--transport",
          "sse",
          "--header",
          `Authorization: Bearer ${key}`,
          "--method",
          "tools/list",
        ], state.env),
        inspector(
          [url, "--transport", "http", "--stored-auth-only", "--method", "tools/list"],
          state.env,
        ),
      ]);
      assert.equal(call.code, 0, call.stderr);
      assert.match(textOf(call.json.result ?? {}), /# Next page/);

      // Clients moving to the 2026 protocol era probe `server/discover` first (`auto`); the
      // runtime does not answer it, and the client must fall back to initialize.
      assert.equal(auto.code, 0, auto.stderr);
      assert.ok(
        (auto.json.result?.tools ?? []).some((t) => t.name === "browser_navigate"),
        JSON.stringify(auto.json).slice(0, 500),
      );

      // Legacy SSE (/sse), as older clients connect, with the same key.
      assert.equal(sse.code, 0, sse.stderr);
      assert.ok(
        (sse.json.result?.tools ?? []).some((t) => t.name === "browser_snapshot"),
        JSON.stringify(sse.json).slice(0, 500),
      );

      // The key is what opens the door: the same call without it is refused (no OAuth here).
      assert.notEqual(bare.code, 0);
      assert.equal(bare.json.result, undefined, JSON.stringify(bare.json));
      assert.equal(bare.json.error?.code, "auth_required", JSON.stringify(bare.json));
      assert.match(bare.json.error?.message ?? "", /UNAUTHORIZED/);
    },
  );

  await t.step(
    "mcp-remote bridges a stdio client to /mcp (and /sse) with the agent key in --header",
    async () => {
      await using state = await clientState();
      const { mcpRemote } = await ensureClientsInstalled();
      for (const [path, strategy] of [["/mcp", "http-only"], ["/sse", "sse-only"]]) {
        const agent = `via-mcp-remote-${strategy}`;
        const { key } = await rt.runtime.agents.add(agent);
        // The header as README examples give it, and (for SSE) in the form that keeps the key in
        // the client config's env rather than its args: mcp-remote expands ${VAR} itself.
        const header = strategy === "http-only"
          ? `Authorization: Bearer ${key}`
          : "Authorization:${OMOTAI_AUTH}";
        const transport = new StdioClientTransport({
          command: "node",
          args: [
            mcpRemote,
            new URL(path, rt.runtime.url!).href,
            "--header",
            header,
            // Without it mcp-remote falls back to the other transport: this must be the one asked.
            "--transport",
            strategy,
          ],
          env: { ...state.env, OMOTAI_AUTH: `Bearer ${key}` },
          stderr: "pipe",
        });
        // mcp-remote logs every message on stderr: drained, or a full pipe would stall it.
        let log = "";
        transport.stderr?.on("data", (chunk: Uint8Array) => {
          if (log.length < 1_000_000) log += new TextDecoder().decode(chunk);
        });
        const client = new Client({ name: "stdio-only-client", version: "0" });
        try {
          await client.connect(transport);
          assert.equal(client.getServerVersion()?.name, "omotai", log.slice(-2_000));
          assert.deepEqual(await client.ping(), {});
          const { tools } = await client.listTools();
          assert.ok(
            tools.some((t) => t.name === "browser_navigate"),
            tools.map((t) => t.name).join(),
          );
          const nav = await client.callTool(
            {
              name: "browser_navigate",
              arguments: { url: `${site.origin}/` },
            },
            undefined,
            { timeout: CALL_TIMEOUT_MS },
          );
          assert.notEqual(nav.isError, true, textOf(nav));
          assert.match(textOf(nav), /# Fixture home/, strategy);
          // The session is the key's agent, whatever the bridge calls itself.
          const rows = (await rt.runtime.audit.rows()).filter((r) => r.agent === agent);
          assert.ok(rows.length > 0, `${strategy}: the audit names the agent of the key sent`);
          const mode = strategy === "http-only"
            ? /Connected to remote server using StreamableHTTPClientTransport/
            : /Connected to remote server using SSEClientTransport/;
          assert.match(log, mode, `${strategy}: the bridge used the transport asked for`);
        } finally {
          await client.close().catch(() => {});
        }
      }
    },
  );

  await t.step(
    "SDK client over stdio, legacy SSE and Streamable HTTP: negotiation, ping, tools, progress, cancellation",
    async () => {
      await using data = await stdioDataDir(site);
      const base = rt.runtime.url!;

      // stdio with the console beside it, so ask_human has an operator to wait for.
      const [command, ...args] = await stdioServer(data.dir, ["--console", "--console-port", "0"]);
      const stdio = new StdioClientTransport({
        command,
        args,
        env: { OMOTAI_ADMIN_TOKEN: ADMIN_TOKEN },
        stderr: "pipe",
      });
      let stderr = "";
      stdio.stderr?.on("data", (chunk: Uint8Array) => stderr += new TextDecoder().decode(chunk));
      const stdioConsole = async () => {
        const found = await within(
          (async () => {
            while (!/console: (\S+)/.test(stderr)) await new Promise((r) => setTimeout(r, 50));
          })(),
          ANSWER_BOUND_MS,
        );
        assert.notEqual(found, "timeout", `no console URL on stderr:\n${stderr}`);
        return stderr.match(/console: (\S+)/)![1];
      };

      const sse = keyedTransport(base, (await rt.runtime.agents.add("matrix-sse")).key, "sse");
      const http = keyedTransport(base, (await rt.runtime.agents.add("matrix-http")).key, "http");
      await exerciseTransport(
        "sse",
        sse,
        site,
        () => Promise.resolve(rt.runtime.consoleUrl ?? base),
      );
      await exerciseTransport(
        "http",
        http,
        site,
        () => Promise.resolve(rt.runtime.consoleUrl ?? base),
      );
      await exerciseTransport("stdio", stdio, site, stdioConsole);
    },
  );

  await t.step(
    "protocol version negotiation over Streamable HTTP: each supported version as asked, an unknown one with the newest",
    async () => {
      const url = new URL("/mcp", rt.runtime.url!).href;
      const { key } = await rt.runtime.agents.add("versions");
      assert.equal(SUPPORTED_PROTOCOL_VERSIONS[0], LATEST_PROTOCOL_VERSION);
      for (const asked of [...SUPPORTED_PROTOCOL_VERSIONS, "2099-01-01", "1999-01-01"]) {
        const expected = SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
          ? asked
          : LATEST_PROTOCOL_VERSION;
        const init = await postMcp(url, key, {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: asked,
            capabilities: {},
            clientInfo: { name: "raw", version: "0" },
          },
        });
        assert.equal(init.status, 200, asked);
        assert.equal(init.messages[0]?.result?.protocolVersion, expected, `asked ${asked}`);
        assert.ok(init.session, `${asked}: a session id`);
        const session = { "mcp-session-id": init.session, "mcp-protocol-version": expected };
        const ack = await postMcp(url, key, {
          jsonrpc: "2.0",
          method: "notifications/initialized",
        }, session);
        assert.equal(ack.status, 202, asked);
        // The session works at the negotiated version.
        const list = await postMcp(
          url,
          key,
          { jsonrpc: "2.0", id: 2, method: "tools/list" },
          session,
        );
        const tools = (list.messages[0]?.result?.tools ?? []) as { name: string }[];
        assert.ok(tools.some((t) => t.name === "browser_navigate"), `${asked}: tools/list`);
        const ping = await postMcp(url, key, { jsonrpc: "2.0", id: 3, method: "ping" }, session);
        assert.deepEqual(ping.messages[0]?.result, {}, `${asked}: ping`);
        if (asked === LATEST_PROTOCOL_VERSION) {
          // A request naming a version the server does not speak is refused, not guessed at.
          const wrong = await postMcp(url, key, { jsonrpc: "2.0", id: 4, method: "ping" }, {
            ...session,
            "mcp-protocol-version": "1999-01-01",
          });
          assert.equal(wrong.status, 400);
        }
        const end = await fetch(url, {
          method: "DELETE",
          headers: { Authorization: `Bearer ${key}`, ...session },
        });
        assert.equal(end.status, 200, `${asked}: DELETE ends the session`);
        await end.body?.cancel();
      }
    },
  );
});
