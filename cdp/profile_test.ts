import assert from "node:assert/strict";
import { join } from "node:path";
import { ProfileStore, STALE_AFTER_MS, sweepStaleProfiles } from "./profile.ts";

Deno.test("ProfileStore.create() makes a 0700 directory and dispose removes it", async () => {
  const data = await Deno.makeTempDir();
  let dir: string;
  {
    await using store = await ProfileStore.open(data);
    dir = await store.create();
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
    assert.equal((await Deno.stat(store.instanceDir)).mode! & 0o777, 0o700);
  }
  await assert.rejects(() => Deno.stat(dir), Deno.errors.NotFound);
  await Deno.remove(data, { recursive: true });
});

Deno.test("sweepStaleProfiles() removes abandoned instances and keeps live ones", async () => {
  const data = await Deno.makeTempDir();
  await using live = await ProfileStore.open(data);
  const abandoned = join(live.root, "iabandoned");
  await Deno.mkdir(join(abandoned, "sdead"), { recursive: true });
  await Deno.writeTextFile(join(abandoned, ".heartbeat"), "0");
  const old = new Date(Date.now() - STALE_AFTER_MS - 5_000);
  await Deno.utime(join(abandoned, ".heartbeat"), old, old);
  const removed = await sweepStaleProfiles(live.root, Date.now());
  assert.deepEqual(removed, [abandoned]);
  assert.ok((await Deno.stat(live.instanceDir)).isDirectory);
  await Deno.remove(data, { recursive: true });
});
