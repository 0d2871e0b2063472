import assert from "node:assert/strict";
import type { AgentInfo } from "../store/agent_store.ts";
import { watchRemovedAgents } from "./agent_watch.ts";

const agent = (name: string, createdAt = "2026-12-01T00:00:00.000Z") =>
  ({ name, createdAt }) as AgentInfo;
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("watchRemovedAgents() closes a held agent no longer listed, also one added and removed between two reads", async () => {
  let listed: AgentInfo[] = [agent("alice"), agent("bob")];
  let held: { name: string; createdAt: string }[] = [agent("alice")];
  const closed: string[] = [];
  const stop = watchRemovedAgents(
    () => listed,
    () => held,
    (name, at) => {
      closed.push(`${name}@${at}`);
      held = held.filter((h) => h.name !== name || h.createdAt !== at);
      return Promise.resolve(1);
    },
    20,
  );
  try {
    await tick(60);
    assert.deepEqual(closed, [], "a listed agent keeps its sessions");
    // carol's key is made, used and removed between two reads: never listed when read.
    held = [...held, agent("carol")];
    await tick(60);
    assert.deepEqual(closed, ["carol@2026-12-01T00:00:00.000Z"]);
    // alice re-added under a new key: the old key's sessions go, the new key's stay.
    listed = [agent("alice", "2026-12-02T00:00:00.000Z")];
    held = [agent("alice"), agent("alice", "2026-12-02T00:00:00.000Z")];
    await tick(60);
    assert.deepEqual(closed.slice(1), ["alice@2026-12-01T00:00:00.000Z"]);
    assert.deepEqual(held, [agent("alice", "2026-12-02T00:00:00.000Z")]);
  } finally {
    stop();
  }
});

Deno.test("watchRemovedAgents() closes nothing while the agents cannot be read", async () => {
  const closed: string[] = [];
  const stop = watchRemovedAgents(
    () => Promise.reject(new Error("database down")),
    () => [agent("alice")],
    (name) => {
      closed.push(name);
      return Promise.resolve(1);
    },
    20,
  );
  try {
    await tick(60);
    assert.deepEqual(closed, []);
  } finally {
    stop();
  }
});
