import assert from "node:assert/strict";
import type { ByteConn } from "./tls_terminate.ts";
import { UpstreamWaits } from "./upstream_waits.ts";

/** A connection that only counts its closes. */
function conn(): ByteConn & { closed: number } {
  const c = {
    closed: 0,
    read: () => Promise.resolve(null),
    write: (p: Uint8Array) => Promise.resolve(p.length),
    close: () => {
      c.closed++;
    },
  };
  return c;
}

Deno.test("UpstreamWaits.release() ends the waits stamped at or before its mark, and no younger one", () => {
  let line = 3;
  const waits = new UpstreamWaits(() => line);
  const old = waits.begin();
  const oldConn = conn();
  old.hold(oldConn);
  line = 4;
  const atMark = waits.begin();
  line = 5;
  const young = waits.begin();
  const youngConn = conn();
  young.hold(youngConn);
  assert.equal(waits.release(4), 2);
  assert.equal(old.released, true);
  assert.equal(atMark.released, true);
  assert.equal(oldConn.closed, 1, "its upstream connection is closed");
  assert.equal(young.released, false);
  assert.equal(youngConn.closed, 0);
  assert.equal(waits.size, 1);
  // Released once: a second release finds only the young wait, and an older mark none.
  assert.equal(waits.release(3), 0);
  assert.equal(oldConn.closed, 1);
});

Deno.test("UpstreamWaits.begin() hands back a wait that closes a connection held after its release, and leaves the set when disposed", () => {
  const waits = new UpstreamWaits(() => 1);
  const dialling = waits.begin();
  assert.equal(waits.release(1), 1);
  // The dial finished after the release: the connection it made is closed at once.
  const late = conn();
  dialling.hold(late);
  assert.equal(late.closed, 1);
  {
    using done = waits.begin();
    assert.equal(done.released, false);
    assert.equal(waits.size, 1);
  }
  assert.equal(waits.size, 0, "a wait that is over is never released");
  assert.equal(waits.release(1), 0);
});
