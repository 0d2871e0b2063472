import assert from "node:assert/strict";
import {
  anyStopped,
  mostWaited,
  parseSchedstat,
  readRunDelays,
  readSchedstat,
} from "./run_delay.ts";
import { findBrowser, launchBrowser } from "../../cdp/mod.ts";

Deno.test("parseSchedstat() reads each pid's run-queue delay in seconds, skipping anything else", () => {
  const text = "41 120000000 2500000000\n42 5 0\ngarbage\n43 1 x\n";
  assert.deepEqual([...parseSchedstat(text)], [[41, 2.5], [42, 0]]);
});

Deno.test("mostWaited() is the most any one main thread waited; new ones count from zero, gone ones not", () => {
  const before = new Map([[1, 1.0], [2, 4.0]]);
  assert.equal(mostWaited(before, new Map([[1, 1.2], [2, 6.5]])), 2.5);
  assert.equal(mostWaited(before, new Map([[3, 0.7]])), 0.7, "started in between");
  assert.equal(mostWaited(before, new Map()), 0, "all ended");
});

Deno.test("readRunDelays() of a real Chromium reads its browser's and renderers' main threads", async () => {
  const dir = await Deno.makeTempDir({ prefix: "omotai-run-delay-" });
  const b = await launchBrowser({
    executable: findBrowser(Deno.env.get("OMOTAI_BROWSER")),
    profileDir: dir,
  });
  try {
    await b.connection.root.send("Target.createTarget", { url: "data:text/html,<p>hi</p>" });
    for (let i = 0; i < 50; i++) {
      const { processInfo } = await b.connection.root.send("SystemInfo.getProcessInfo");
      if (processInfo.some((p) => p.type === "renderer")) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const delays = await readRunDelays(b.connection.root, b.pid, 10_000);
    assert.ok(delays && delays.size >= 2, `read ${delays?.size} main threads`);
    for (const s of delays.values()) assert.ok(s >= 0);
    assert.equal(await readRunDelays(b.connection.root, undefined, 10_000), undefined);
  } finally {
    b.kill("SIGKILL");
    await b.exited;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("anyStopped() tells a stopped process (SIGSTOP) from a sleeping one, as the kernel reports them", async () => {
  const child = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" })
    .spawn();
  try {
    // Just spawned, the child may still be running (exec, on a busy machine): it is asked
    // again until the kernel reports it asleep, as it is for the stopped state below.
    const asleep = new RegExp(`^${child.pid} \\d+ \\d+ S$`, "m");
    let sleeping = await readSchedstat([child.pid]);
    for (let i = 0; i < 250 && !asleep.test(sleeping); i++) {
      await new Promise((r) => setTimeout(r, 20));
      sleeping = await readSchedstat([child.pid]);
    }
    assert.match(sleeping, asleep);
    assert.equal(anyStopped(sleeping), false);
    assert.equal(parseSchedstat(sleeping).has(child.pid), true);
    child.kill("SIGSTOP");
    let stopped = "";
    for (let i = 0; i < 250 && !anyStopped(stopped); i++) {
      await new Promise((r) => setTimeout(r, 20));
      stopped = await readSchedstat([child.pid]);
    }
    assert.equal(anyStopped(stopped), true, stopped);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
});
