import assert from "node:assert/strict";
import { StopRule } from "../launcher/stop_signals.ts";
import { serveUntilStopped, StopSignals } from "./shutdown.ts";

/** Polls `check` (keeping the event loop alive: signal listeners do not) for up to 10 s. */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), "in time");
}

Deno.test("StopSignals: a real SIGTERM stops, its repeat is ignored, one after the grace period exits with 143", async () => {
  let now = 0;
  const exits: number[] = [];
  let first: string | undefined;
  using signals = new StopSignals({
    rule: new StopRule({ now: () => now, graceMs: 1_000 }),
    exit: (code) => exits.push(code),
  });
  signals.first.then((s) => first = s);
  Deno.kill(Deno.pid, "SIGTERM");
  await until(() => first !== undefined);
  assert.equal(first, "SIGTERM");
  now = 10;
  Deno.kill(Deno.pid, "SIGTERM");
  await until(() => signals.repeats === 1);
  assert.deepEqual(exits, [], "the same stop twice does not force the exit");
  now = 1_000;
  Deno.kill(Deno.pid, "SIGTERM");
  await until(() => exits.length === 1);
  assert.deepEqual(exits, [143]);
});

Deno.test("serveUntilStopped(): a stop signalled before it runs (during the start) still runs the whole dispose", async () => {
  using signals = new StopSignals({ exit: () => assert.fail("no forced exit") });
  let first: string | undefined;
  signals.first.then((s) => first = s);
  Deno.kill(Deno.pid, "SIGHUP");
  await until(() => first !== undefined);
  let disposed = false;
  const code = await serveUntilStopped({
    done: new Promise(() => {}),
    dispose: async () => {
      await new Promise((r) => setTimeout(r, 50));
      disposed = true;
    },
    watchParent: false,
    signals,
  });
  assert.equal(code, 0);
  assert.equal(disposed, true);
});

Deno.test("serveUntilStopped(): a dispose that outlasts its bound still seals the audit, exit code 1", async () => {
  const sealed: string[] = [];
  const code = await serveUntilStopped({
    done: Promise.resolve(),
    dispose: () => new Promise<void>(() => {}),
    seal: () => {
      sealed.push("runtime_stopped + final checkpoint");
      return Promise.resolve();
    },
    watchParent: false,
    timeoutMs: 100,
  });
  assert.equal(code, 1);
  assert.deepEqual(sealed, ["runtime_stopped + final checkpoint"]);
});

Deno.test("serveUntilStopped(): a failing seal is logged, not thrown", async () => {
  const code = await serveUntilStopped({
    done: Promise.resolve(),
    dispose: () => new Promise<void>(() => {}),
    seal: () => Promise.reject(new Error("database gone")),
    watchParent: false,
    timeoutMs: 50,
  });
  assert.equal(code, 1);
});
