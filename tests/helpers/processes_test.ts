import assert from "node:assert/strict";
import { alive, descendants, parsePssKiB, type Proc, processes, pssKiB } from "./processes.ts";

const p = (pid: number, ppid: number): Proc => ({
  pid,
  ppid,
  comm: "x",
  uid: 0,
  seccomp: 0,
  argv: [],
});

Deno.test("descendants() is the whole subtree, minus skipped subtrees; cycles are harmless", () => {
  const all = [p(1, 0), p(10, 1), p(11, 10), p(12, 11), p(20, 1), p(21, 20), p(30, 99)];
  assert.deepEqual(descendants(10, all).map((x) => x.pid).sort(), [11, 12]);
  assert.deepEqual(descendants(1, all, [20]).map((x) => x.pid).sort(), [10, 11, 12]);
  assert.deepEqual(descendants(5, [p(5, 6), p(6, 5)]).map((x) => x.pid), [6]);
});

Deno.test("parsePssKiB() reads the Pss line, not Pss_Anon and friends", () => {
  const text = "Rss:  5000 kB\nPss:  1234 kB\nPss_Anon:  999 kB\n";
  assert.equal(parsePssKiB(text), 1234);
  assert.equal(parsePssKiB(""), 0);
});

Deno.test("processes(), pssKiB() and alive() see this test's own process", async () => {
  const me = processes().find((x) => x.pid === Deno.pid);
  assert.ok(me, "this process is listed");
  assert.ok(me.comm.length > 0);
  assert.ok(await pssKiB(Deno.pid) > 0);
  assert.equal(await pssKiB(2 ** 30), 0);
  assert.equal(alive(Deno.pid), true);
  assert.equal(alive(undefined), false);
});
