import assert from "node:assert/strict";
import { SSEStreamingApi } from "hono/streaming";
// @ts-types="npm:@modelcontextprotocol/sdk@1.32.2/server/webStandardStreamableHttp"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { AgentInfo } from "../store/agent_store.ts";
import { Servers } from "../../tests/helpers/mcp_servers.ts";
import { Activity } from "./idle_sweeper.ts";
import { type McpSession, McpSessionTable } from "./mcp_session_table.ts";
import { SseServerTransport } from "./sse_transport.ts";

const ALICE: AgentInfo = { name: "alice", createdAt: "2026-01-01T00:00:00Z" };
/** Alice's key removed and added again: the same name, another agent. */
const ALICE_AGAIN: AgentInfo = { name: "alice", createdAt: "2026-02-01T00:00:00Z" };
const BOB: AgentInfo = { name: "bob", createdAt: "2026-01-01T00:00:00Z" };

/** A Streamable HTTP session whose server is connected (so closing it closes the server). */
async function streamable(
  servers: Servers,
  agent: AgentInfo | undefined,
): Promise<Extract<McpSession, { kind: "streamable" }>> {
  const server = servers.newServer(agent);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
  });
  await server.connect(transport);
  return {
    kind: "streamable",
    id: crypto.randomUUID(),
    transport,
    server,
    agent,
    activity: new Activity(),
  };
}

/** An SSE session over a real (unread) event stream. */
function sse(
  servers: Servers,
  agent: AgentInfo | undefined,
): Extract<McpSession, { kind: "sse" }> {
  const pipe = new TransformStream<Uint8Array, Uint8Array>();
  const transport = new SseServerTransport(
    new SSEStreamingApi(pipe.writable, pipe.readable),
    "/messages",
  );
  const server = servers.newServer(agent);
  // Nobody reads the stream: its endpoint event would wait, so the server is not connected.
  return { kind: "sse", id: transport.sessionId, transport, server, agent };
}

Deno.test("McpSessionTable.get() finds a session only by its kind and the agent that opened it", async () => {
  const servers = new Servers();
  const table = new McpSessionTable();
  const mine = await streamable(servers, ALICE);
  const keyless = await streamable(servers, undefined);
  const stream = sse(servers, ALICE);
  for (const s of [mine, keyless, stream]) table.add(s);

  assert.equal(table.get("streamable", mine.id, ALICE), mine);
  assert.equal(table.get("streamable", mine.id, { ...ALICE }), mine, "the same agent, any copy");
  assert.equal(table.get("streamable", mine.id, BOB), undefined, "another agent's is none");
  assert.equal(table.get("streamable", mine.id, ALICE_AGAIN), undefined, "a re-added key's too");
  assert.equal(table.get("streamable", mine.id, undefined), undefined);
  assert.equal(table.get("sse", mine.id, ALICE), undefined, "another transport's is none");
  assert.equal(table.get("sse", stream.id, ALICE), stream);
  assert.equal(table.get("streamable", keyless.id, undefined), keyless);
  assert.equal(table.get("streamable", keyless.id, ALICE), undefined);
  assert.equal(table.get("streamable", "nope", ALICE), undefined);
  await table.end(() => true);
});

Deno.test("McpSessionTable counts, lists and removes its sessions", async () => {
  const servers = new Servers();
  const table = new McpSessionTable();
  const a1 = await streamable(servers, ALICE);
  const a2 = sse(servers, ALICE);
  const again = await streamable(servers, ALICE_AGAIN);
  const keyless = await streamable(servers, undefined);
  for (const s of [a1, a2, again, keyless]) table.add(s);

  assert.equal(table.count(), 4);
  assert.deepEqual([...table.agents()].sort(), ["alice", "alice", "alice", undefined].sort());
  assert.deepEqual(
    [...table.of("streamable")].map((s) => s.id).sort(),
    [a1, again, keyless].map((s) => s.id).sort(),
  );
  assert.deepEqual([...table.of("sse")], [a2]);
  assert.deepEqual(
    table.heldAgents().sort((x, y) => x.createdAt.localeCompare(y.createdAt)),
    [ALICE, ALICE_AGAIN],
    "each agent once",
  );

  assert.equal(table.remove(a1.id), true);
  assert.equal(table.remove(a1.id), false, "gone already");
  assert.equal(table.count(), 3);
  assert.equal(table.get("streamable", a1.id, ALICE), undefined);
  assert.equal(servers.closed, 0, "removing closes nothing: the server is the caller's");
  await table.end(() => true);
  await a1.server.close();
});

Deno.test("McpSessionTable.end() takes the sessions it picks out before closing their servers, and only those", async () => {
  const servers = new Servers();
  const table = new McpSessionTable();
  const alice = await streamable(servers, ALICE);
  const bob = await streamable(servers, BOB);
  table.add(alice);
  table.add(bob);
  let foundWhileClosing: McpSession | undefined | "unset" = "unset";
  const onclose = alice.server.onclose;
  alice.server.onclose = () => {
    foundWhileClosing = table.get("streamable", alice.id, ALICE);
    onclose?.();
  };

  assert.equal(await table.end((s) => s.agent?.name === "alice"), 1);
  assert.equal(foundWhileClosing, undefined, "a request racing the close finds no session");
  assert.equal(servers.closed, 1);
  assert.equal(table.count(), 1);
  assert.equal(table.get("streamable", bob.id, BOB), bob);
  assert.equal(await table.end(() => true), 1);
  assert.equal(servers.closed, 2);
  assert.equal(table.count(), 0);
});

Deno.test("McpSessionTable.end() ends every picked session when one server's close fails", async () => {
  const servers = new Servers();
  const table = new McpSessionTable();
  const failing = await streamable(servers, ALICE);
  const other = await streamable(servers, ALICE);
  failing.server.close = () => Promise.reject(new Error("close failed"));
  table.add(failing);
  table.add(other);
  assert.equal(await table.end(() => true), 2);
  assert.equal(table.count(), 0);
  assert.equal(servers.closed, 1, "the other server closed all the same");
  await failing.transport.close();
});
