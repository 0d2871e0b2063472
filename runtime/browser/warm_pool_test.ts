import assert from "node:assert/strict";
import type { BrowserProcess } from "../../cdp/mod.ts";
import type { WarmBrowser } from "./launch.ts";
import { defaultPoolSize, WarmPool } from "./warm_pool.ts";

/** A browser stand-in: alive until killed; counts how it ended. */
function fakeWarm(n: number, ended: string[]): WarmBrowser {
  let exited = false;
  let resolveExit!: () => void;
  const exitedP = new Promise<void>((r) => resolveExit = r);
  const browser = {
    get hasExited() {
      return exited;
    },
    connection: { closed: false },
    exited: exitedP,
    kill() {
      if (exited) return;
      exited = true;
      ended.push(`b${n}`);
      resolveExit();
    },
    close() {
      this.kill();
      return Promise.resolve();
    },
  };
  return {
    browser: browser as unknown as BrowserProcess,
    profileDir: `/p/${n}`,
    extras: { args: [], release() {} },
  };
}

function pool(options: { size: number; idleMs?: number; refill?: boolean; fail?: boolean }) {
  let made = 0;
  const ended: string[] = [];
  const lines: string[] = [];
  const p = new WarmPool({
    size: options.size,
    idleMs: options.idleMs,
    refill: options.refill,
    start: () => {
      if (options.fail) return Promise.reject(new Error("no browser here"));
      return Promise.resolve(fakeWarm(++made, ended));
    },
    log: (l) => lines.push(l),
  });
  return { p, ended, lines, made: () => made };
}

Deno.test("WarmPool hands out each browser once, in order, and refills behind a take", async () => {
  const { p, ended, made } = pool({ size: 2 });
  await p.fill();
  assert.equal(p.ready, 2);
  const a = await p.take();
  const b = await p.take();
  assert.equal(a?.profileDir, "/p/1");
  assert.equal(b?.profileDir, "/p/2");
  await p.fill();
  assert.equal(p.ready, 2, "refilled");
  assert.equal(made(), 4);
  const profiles = new Set([a, b, await p.take(), await p.take()].map((w) => w?.profileDir));
  assert.equal(profiles.size, 4, "no profile is handed out twice");
  await p.fill();
  await p[Symbol.asyncDispose]();
  assert.deepEqual(ended, ["b5", "b6"], "only the ready ones end with the pool");
});

Deno.test("WarmPool.take() skips a browser that died while it waited", async () => {
  const made: WarmBrowser[] = [];
  const ended: string[] = [];
  const p = new WarmPool({
    size: 2,
    refill: false,
    start: () => {
      const w = fakeWarm(made.length + 1, ended);
      made.push(w);
      return Promise.resolve(w);
    },
    log: () => {},
  });
  await p.fill();
  made[0].browser.kill(); // the first in line dies while waiting
  assert.equal((await p.take())?.profileDir, "/p/2");
  assert.equal(await p.take(), undefined);
  await p[Symbol.asyncDispose]();
});

Deno.test("WarmPool gives its browsers back when idle, and a take then misses and refills", async () => {
  const { p, ended, lines } = pool({ size: 1, idleMs: 30 });
  await p.fill();
  assert.equal(p.ready, 1);
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(p.ready, 0);
  assert.deepEqual(ended, ["b1"]);
  assert.match(lines.join("\n"), /idle, closed 1 browser/);
  assert.equal(await p.take(), undefined, "a miss: the session launches its own");
  await p.fill();
  assert.equal(p.ready, 1);
  await p[Symbol.asyncDispose]();
});

Deno.test("WarmPool without refill (stdio) hands out one browser and starts no other", async () => {
  const { p, made } = pool({ size: 1, refill: false });
  await p.fill();
  assert.ok(await p.take());
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(made(), 1);
  assert.equal(await p.take(), undefined);
  await p[Symbol.asyncDispose]();
});

Deno.test("WarmPool whose starts fail logs, hands out nothing and does not spin", async () => {
  const { p, lines } = pool({ size: 1, fail: true });
  await p.fill();
  assert.equal(await p.take(), undefined);
  await p.fill();
  assert.ok(lines.length >= 1 && lines.length <= 3, lines.join("\n"));
  assert.match(lines[0], /a browser did not start/);
  await p[Symbol.asyncDispose]();
});

Deno.test("defaultPoolSize() keeps one warm browser on small machines, two from eight cores", () => {
  assert.equal(defaultPoolSize(1), 1);
  assert.equal(defaultPoolSize(2), 1);
  assert.equal(defaultPoolSize(8), 2);
});

Deno.test("WarmPool.take() while a browser is starting waits for it; a second taker launches its own", async () => {
  const ended: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  let made = 0;
  const p = new WarmPool({
    size: 1,
    start: async () => {
      const n = ++made;
      if (n === 1) await gate;
      return fakeWarm(n, ended);
    },
    log: () => {},
  });
  const filling = p.fill();
  const first = p.take();
  assert.equal(await p.take(), undefined, "only one session waits for the starting browser");
  release();
  assert.equal((await first)?.profileDir, "/p/1");
  await filling;
  await p.fill();
  assert.equal(p.ready, 1, "refilled behind the waiting take");
  await p[Symbol.asyncDispose]();
});

Deno.test("WarmPool without refill starts no second browser behind a waiting take", async () => {
  const ended: string[] = [];
  let made = 0;
  const p = new WarmPool({
    size: 1,
    refill: false,
    start: async () => {
      await new Promise((r) => setTimeout(r, 10));
      return fakeWarm(++made, ended);
    },
    log: () => {},
  });
  const filling = p.fill();
  assert.equal((await p.take())?.profileDir, "/p/1");
  await filling;
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(made, 1);
  await p[Symbol.asyncDispose]();
});

Deno.test("WarmPool's close calls off a start under way instead of waiting it out", async () => {
  const ended: string[] = [];
  let seen: AbortSignal | undefined;
  const p = new WarmPool({
    size: 1,
    // A start that would take as long as a launch on a loaded machine, unless called off.
    start: (signal) => {
      seen = signal;
      return new Promise<WarmBrowser>((resolve, reject) => {
        const slow = setTimeout(() => resolve(fakeWarm(1, ended)), 60_000);
        signal.addEventListener("abort", () => {
          clearTimeout(slow);
          reject(new Error("called off"));
        }, { once: true });
      });
    },
    log: () => {},
  });
  const filling = p.fill();
  assert.equal(seen?.aborted, false);
  await p[Symbol.asyncDispose]();
  assert.equal(seen?.aborted, true, "the start was told to stop");
  await filling;
  assert.equal(p.ready, 0);
  assert.deepEqual(ended, []);
});
