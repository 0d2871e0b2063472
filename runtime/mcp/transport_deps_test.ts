import assert from "node:assert/strict";
import type { AgentInfo } from "../store/agent_store.ts";
import { OmotaiError } from "../errors.ts";
import { type CapacityCode, CapacityError, SessionPlaces } from "./session_places.ts";
import { sessionAdmission } from "./transport_deps.ts";

const ALICE: AgentInfo = { name: "alice", createdAt: "2026-01-01T00:00:00Z" };
const BOB: AgentInfo = { name: "bob", createdAt: "2026-01-01T00:00:00Z" };

Deno.test("sessionAdmission() takes a place within the agent's share, refuses one more with AGENT_BUSY and says so", async () => {
  const shares: string[] = [];
  const refused: [CapacityCode, string | undefined][] = [];
  const admit = sessionAdmission({
    places: new SessionPlaces({ max: 10, held: () => [] }),
    agentMaxSessions: (agent) => {
      shares.push(agent.name);
      return Promise.resolve(agent.name === "alice" ? 1 : undefined);
    },
    onRefused: (code, agent) => refused.push([code, agent?.name]),
  });
  const place = await admit(ALICE);
  await assert.rejects(
    admit(ALICE),
    (err) => err instanceof CapacityError && err.code === "AGENT_BUSY",
  );
  assert.deepEqual(refused, [["AGENT_BUSY", "alice"]]);
  await admit(BOB); // another agent still gets in
  place.release();
  await admit(ALICE); // a place given back is taken again
  assert.deepEqual(shares, ["alice", "alice", "bob", "alice"]);
});

Deno.test("sessionAdmission() refuses past the runtime's cap with SERVER_BUSY; a session without an agent reads no share", async () => {
  const refused: CapacityCode[] = [];
  let shareReads = 0;
  const admit = sessionAdmission({
    places: new SessionPlaces({ max: 1, held: () => [] }),
    agentMaxSessions: () => {
      shareReads++;
      return Promise.resolve(undefined);
    },
    onRefused: (code) => refused.push(code),
  });
  await admit(undefined);
  await assert.rejects(
    admit(undefined),
    (err) => err instanceof CapacityError && err.code === "SERVER_BUSY",
  );
  assert.deepEqual(refused, ["SERVER_BUSY"]);
  assert.equal(shareReads, 0);
});

Deno.test("sessionAdmission() refuses when the agent's share cannot be read, taking no place and telling no capacity refusal", async () => {
  let told = 0;
  const admit = sessionAdmission({
    places: new SessionPlaces({ max: 1, held: () => [] }),
    agentMaxSessions: () => Promise.reject(new OmotaiError("POLICY_NOT_GRANTED", "unreadable")),
    onRefused: () => told++,
  });
  await assert.rejects(admit(ALICE), (err) => (err as OmotaiError).code === "POLICY_NOT_GRANTED");
  assert.equal(told, 0);
  await admit(undefined); // the one place is still free
});
