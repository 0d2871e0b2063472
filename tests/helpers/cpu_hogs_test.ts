import assert from "node:assert/strict";
import { cpuHogs } from "./cpu_hogs.ts";

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
