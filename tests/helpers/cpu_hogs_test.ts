import assert from "node:assert/strict";
import { type BusyMachine, busyMachine, cpuHogs, loadavgRunning, missingHogs } from "./cpu_hogs.ts";

/** Pids of every process whose command line is exactly `args`. */
async function pidsOf(args: string): Promise<number[]> {
  const out = await new Deno.Command("ps", { args: ["-eo", "pid=,args="], stdout: "piped" })
    .output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((l) => l.trim().match(/^(\d+) (.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null && m[2] === args)
    .map((m) => Number(m[1]));
}

Deno.test("cpuHogs() spins its loops until disposed, then leaves none of them running", async () => {
  const loop = "sh -c while :; do :; done";
  const before = new Set(await pidsOf(loop));
  let mine: number[] = [];
  {
    await using hogs = cpuHogs(2);
    assert.equal(hogs.count, 2);
    // The loops are children of `timeout`: wait until both run.
    for (let i = 0; i < 100 && mine.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      mine = (await pidsOf(loop)).filter((p) => !before.has(p));
    }
    assert.equal(mine.length, 2, "both loops run");
  }
  const left = (await pidsOf(loop)).filter((p) => mine.includes(p));
  assert.deepEqual(left, [], "no loop outlives its hogs");
});

Deno.test("missingHogs() tops the other load up to the target, never past it", () => {
  // The mean counts the reader itself (1) and the test's own hogs.
  assert.equal(missingHogs(2, 1, 0), 2, "an idle machine gets both hogs");
  assert.equal(missingHogs(2, 3, 0), 0, "two external hogs: none");
  assert.equal(missingHogs(2, 5, 0), 0, "four external hogs: none");
  assert.equal(missingHogs(2, 2, 0), 1, "one busy task: one hog");
  assert.equal(missingHogs(2, 2.5, 0), 1, "half a busy task on average: still one hog");
  assert.equal(missingHogs(2, 2.95, 0), 0, "1.95 busy tasks count as two");
  assert.equal(missingHogs(2, 3, 2), 2, "its own two hogs are not the other load");
  assert.equal(missingHogs(2, 4, 2), 1, "its own two hogs and one more: one of them is enough");
  assert.equal(missingHogs(2, 0, 0), 2, "never more than the target");
  assert.equal(missingHogs(0, 1, 0), 0);
});

Deno.test("loadavgRunning() reads the running count of /proc/loadavg", () => {
  assert.equal(loadavgRunning("0.52 0.58 0.59 3/121 4242\n"), 3);
  assert.equal(loadavgRunning("12.00 8.10 4.00 17/2048 1\n"), 17);
  assert.throws(() => loadavgRunning("nonsense"), /not \/proc\/loadavg/);
  assert.ok(loadavgRunning(Deno.readTextFileSync("/proc/loadavg")) >= 1, "this reader runs");
});

Deno.test("busyMachine() starts only the hogs the other load leaves missing, and follows it", async () => {
  let external = 0;
  let machine: BusyMachine | undefined;
  // A machine whose other load the test sets; its own hogs count as they run, and the reader.
  await using load = machine = await busyMachine(2, {
    runnable: () => external + (machine?.count ?? 0) + 1,
    sampleMs: 20,
    everyMs: 20,
  });
  assert.equal(load.count, 2, "an idle machine: both hogs");
  external = 2;
  await load.settled();
  assert.equal(load.count, 0, "two external hogs: its own go");
  external = 1;
  await load.settled();
  assert.equal(load.count, 1, "one external task left: one hog");
  await load.settled();
  assert.equal(load.count, 1, "and it stays one");
  external = 4;
  await load.settled();
  assert.equal(load.count, 0);
  assert.equal(load.most, 2);
});

Deno.test("busyMachine() beside two real hogs starts none; alone it keeps at least the target running", async () => {
  {
    await using _external = cpuHogs(2);
    await new Promise((r) => setTimeout(r, 200));
    await using load = await busyMachine(2, { everyMs: 200 });
    await load.settled();
    await load.settled();
    assert.equal(load.most, 0, "the two external hogs were load enough");
  }
  const loop = "sh -c while :; do :; done";
  const before = new Set(await pidsOf(loop));
  await using load = await busyMachine(2, { everyMs: 200 });
  // Whatever else this machine runs, its runnable tasks (less this reader) reach the target.
  // In the parallel suite the other load it measured may end the moment after (another test
  // file finishing): the helper follows at its next measure, so a quiet window is measured
  // again after the helper has adjusted; only a machine left short across every window fails.
  const means: string[] = [];
  for (let window = 0; window < 10; window++) {
    let total = 0;
    for (let i = 0; i < 20; i++) {
      total += loadavgRunning(Deno.readTextFileSync("/proc/loadavg")) - 1;
      await new Promise((r) => setTimeout(r, 25));
    }
    means.push(`${total / 20} with ${load.count} hogs`);
    if (total / 20 >= 1.5) break;
    await load.settled();
  }
  assert.ok(
    Number(means.at(-1)!.split(" ")[0]) >= 1.5,
    `runnable tasks short of the target in every window: ${means.join("; ")}`,
  );
  const mine = (await pidsOf(loop)).filter((p) => !before.has(p));
  await load[Symbol.asyncDispose]();
  const left = (await pidsOf(loop)).filter((p) => mine.includes(p));
  assert.deepEqual(left, [], "no loop outlives its hogs");
});
