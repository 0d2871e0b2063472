import assert from "node:assert/strict";
import { CapacityError, SessionPlaces } from "./session_places.ts";

/** Places over a table the test fills by hand. */
function table(max?: number) {
  const held: (string | undefined)[] = [];
  return { held, places: new SessionPlaces({ max, held: () => held }) };
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CapacityError);
    return err.code;
  }
  return "taken";
}

Deno.test("SessionPlaces.take() counts an agent's sessions held and opening against its share, every session against the cap", () => {
  const { held, places } = table(3);
  const a1 = places.take("a", 2);
  held.push("a");
  a1.release();
  places.take("a", 2);
  // Opening, not yet held: it counts all the same.
  assert.equal(refusal(() => places.take("a", 2)), "AGENT_BUSY");
  const b = places.take("b", 2);
  assert.equal(refusal(() => places.take("b", 2)), "SERVER_BUSY");
  // Past its share and the cap both: the agent's own reason.
  assert.equal(refusal(() => places.take("a", 2)), "AGENT_BUSY");
  b.release();
  b.release();
  assert.equal(refusal(() => places.take("b", 2)), "taken");
});

Deno.test("SessionPlaces.take() gives a place back when its session leaves the table, and without a share or an agent only the cap binds", () => {
  const { held, places } = table(2);
  held.push("a");
  assert.equal(refusal(() => places.take("a", 1)), "AGENT_BUSY");
  held.pop();
  assert.equal(refusal(() => places.take("a", 1)), "taken");
  assert.equal(refusal(() => places.take(undefined, 1)), "taken");
  assert.equal(refusal(() => places.take("a", undefined)), "SERVER_BUSY");
  const open = table();
  for (let i = 0; i < 50; i++) open.places.take("a", undefined);
  assert.equal(refusal(() => open.places.take("a", 50)), "AGENT_BUSY");
});
