import assert from "node:assert/strict";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Runtime } from "../runtime/cli/start.ts";
import { eventually, keyedTransport, startTestRuntime, TestClient } from "./helpers/harness.ts";
import { tempDir } from "./helpers/temp_dir.ts";

/** Real MCP clients of one runtime, each with its agent's key; all closed at the end. */
function clients(runtime: Runtime) {
  const open: TestClient[] = [];
  const keys = new Map<string, string>();
  return {
    /** Adds agent `name` (with its own policy file, if given). */
    async agent(name: string, policy?: string): Promise<void> {
      keys.set(name, (await runtime.agents.add(name, policy)).key);
    },
    /** Opens a session of `name` over `kind`; rejects when the runtime refuses it. */
    async connect(name: string, kind: "http" | "sse"): Promise<TestClient> {
      const client = new Client({ name: "fair-shares-test", version: "0" });
      await client.connect(keyedTransport(runtime.url!, keys.get(name)!, kind));
      const c = new TestClient(client);
      open.push(c);
      return c;
    },
    /** The refusal a session of `name` over `kind` meets: the client's error text. */
    async refused(name: string, kind: "http" | "sse"): Promise<string> {
      const client = new Client({ name: "fair-shares-test", version: "0" });
      try {
        await client.connect(keyedTransport(runtime.url!, keys.get(name)!, kind));
      } catch (err) {
        await client.close().catch(() => {});
        const code = (err as { code?: unknown }).code;
        return `${code ?? ""} ${(err as Error).message}`;
      }
      await new TestClient(client)[Symbol.asyncDispose]();
      throw new Error(`a ${kind} session of ${name} was not refused`);
    },
    /** What a raw request opening a session of `name` over `kind` is answered. */
    async raw(name: string, kind: "http" | "sse") {
      const headers = { authorization: `Bearer ${keys.get(name)}` };
      const res = kind === "sse"
        ? await fetch(new URL("/sse", runtime.url), { headers })
        : await fetch(new URL("/mcp", runtime.url), {
          method: "POST",
          headers: {
            ...headers,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: {
              protocolVersion: "2025-06-18",
              capabilities: {},
              clientInfo: { name: "raw", version: "0" },
            },
          }),
        });
      return {
        status: res.status,
        retryAfter: res.headers.get("retry-after"),
        text: await res.text(),
      };
    },
    async [Symbol.asyncDispose]() {
      for (const c of open) await c[Symbol.asyncDispose]();
    },
  };
}

/** The runtime's `session_refused` rows (of `agents`, when given), as `agent reason`. */
async function refusals(runtime: Runtime, agents?: string[]): Promise<string[]> {
  return (await runtime.audit.rows()).filter((r) =>
    r.kind === "session_refused" && (!agents || agents.includes(r.agent ?? ""))
  )
    .map((r) => `${r.agent} ${r.reason}`);
}

/**
 * The two cases of a runtime with --max-sessions 3 and no max_sessions of its own share it:
 * each case's agents are its own, its clients are closed when it ends (the second waits until
 * the runtime has seen them go) and it reads only its own agents' refusals.
 */
Deno.test("fair shares: one runtime with --max-sessions 3", async (t) => {
  await using dir = await tempDir("omotai-fair-");
  await using runtime = await startTestRuntime(dir.path, "allowed_origins: []\n", {
    maxSessions: 3,
  });

  await t.step(
    "fair shares: with --max-sessions 3 one agent gets its 2 over either transport, then AGENT_BUSY with Retry-After; another agent still gets in; the cap is SERVER_BUSY; a closed session frees a place at once",
    async () => {
      await using c = clients(runtime);
      await c.agent("alice");
      await c.agent("bob");
      const http = await c.connect("alice", "http");
      await c.connect("alice", "sse");
      assert.match(
        await c.refused("alice", "http"),
        /^503 .*AGENT_BUSY: this agent holds its 2 sessions/,
      );
      assert.match(await c.refused("alice", "sse"), /^503 /);
      for (const kind of ["http", "sse"] as const) {
        const raw = await c.raw("alice", kind);
        assert.deepEqual([raw.status, raw.retryAfter], [503, "10"], kind);
        assert.match(raw.text, /^AGENT_BUSY: /, kind);
      }
      // Alice's refusals left the third place free: bob takes it.
      const bobs = await c.connect("bob", "sse");
      assert.ok((await bobs.client.listTools()).tools.length > 0, "bob's session is served");
      assert.match(await c.refused("bob", "http"), /^503 .*SERVER_BUSY: this runtime holds its 3/);
      const full = await c.raw("bob", "sse");
      assert.deepEqual([full.status, full.retryAfter], [503, "10"]);
      assert.match(full.text, /^SERVER_BUSY: /);
      assert.deepEqual(await refusals(runtime, ["alice", "bob"]), [
        "alice AGENT_BUSY",
        "alice AGENT_BUSY",
        "alice AGENT_BUSY",
        "alice AGENT_BUSY",
        "bob SERVER_BUSY",
        "bob SERVER_BUSY",
      ]);
      // Alice ends a session (Streamable HTTP's DELETE): its place is hers again at once.
      await http[Symbol.asyncDispose]();
      await c.connect("alice", "http");
      assert.equal(runtime.http!.connectionCount(), 3);
      // The console says what an agent's default share is.
      const capacity = await fetch(new URL("/api/capacity", runtime.url), {
        headers: { authorization: `Bearer ${runtime.adminToken}` },
      });
      assert.deepEqual(await capacity.json(), { open: 3, max: 3, agentShare: 2 });
    },
  );

  await t.step(
    "fair shares: an agent's policy max_sessions overrides its share, above it (up to the cap) or below it; an SSE client that leaves frees its place",
    async () => {
      // The first case's sessions are closed; the runtime may still be noticing its SSE one's.
      assert.ok(await eventually(() => runtime.http!.connectionCount() === 0));
      const policy = async (name: string, yaml: string) => {
        const file = `${dir.path}/${name}.yaml`;
        await Deno.writeTextFile(file, yaml);
        return file;
      };
      await using c = clients(runtime);
      await c.agent("crawler", await policy("crawler", "allowed_origins: []\nmax_sessions: 3\n"));
      await c.agent("single", await policy("single", "allowed_origins: []\nmax_sessions: 1\n"));
      const taken = [
        await c.connect("crawler", "sse"),
        await c.connect("crawler", "http"),
        await c.connect("crawler", "sse"),
      ];
      // Its third is past the default share (2): the policy's 3 let it in. Past both its share
      // and the cap, the agent is told its own reason.
      assert.match(
        await c.refused("crawler", "http"),
        /AGENT_BUSY: this agent holds its 3 sessions/,
      );
      // The SSE client closes its stream: the runtime notices, and the place is free again.
      await taken[0][Symbol.asyncDispose]();
      await taken[2][Symbol.asyncDispose]();
      assert.ok(await eventually(() => runtime.http!.connectionCount() === 1));
      await c.connect("single", "http");
      assert.match(await c.refused("single", "sse"), /^503 /);
      const raw = await c.raw("single", "http");
      assert.match(raw.text, /^AGENT_BUSY: this agent holds its 1 sessions/);
      assert.deepEqual(await refusals(runtime, ["crawler", "single"]), [
        "crawler AGENT_BUSY",
        "single AGENT_BUSY",
        "single AGENT_BUSY",
      ]);
    },
  );
});

Deno.test("fair shares: the runtime's policy max_sessions binds the agents without a policy of their own; an agent's own policy without one gives the default share", async () => {
  await using dir = await tempDir("omotai-fair-");
  await using runtime = await startTestRuntime(dir.path, "allowed_origins: []\nmax_sessions: 1\n", {
    maxSessions: 4,
  });
  const own = `${dir.path}/own.yaml`;
  await Deno.writeTextFile(own, "allowed_origins: []\n");
  await using c = clients(runtime);
  await c.agent("plain");
  await c.agent("owner", own);
  await c.connect("plain", "http");
  assert.match(await c.refused("plain", "http"), /AGENT_BUSY: this agent holds its 1 sessions/);
  await c.connect("owner", "http");
  await c.connect("owner", "sse");
  assert.match(await c.refused("owner", "http"), /AGENT_BUSY: this agent holds its 2 sessions/);
  assert.deepEqual(await refusals(runtime), ["plain AGENT_BUSY", "owner AGENT_BUSY"]);
});
